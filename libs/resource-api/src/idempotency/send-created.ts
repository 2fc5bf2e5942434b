import type { FastifyReply } from 'fastify';
import type { IdempotentResult } from './idempotency';

/** Applies a create's status, `Location` and `Idempotent-Replayed` to the reply; returns the body. */
export function sendCreated(reply: FastifyReply, result: IdempotentResult): unknown {
  void reply.status(result.status);
  if (result.location) void reply.header('Location', result.location);
  if (result.replayed) void reply.header('Idempotent-Replayed', 'true');
  return result.body;
}
