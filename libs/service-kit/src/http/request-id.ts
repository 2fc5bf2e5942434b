import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Fastify `genReqId`: echo the caller's X-Request-Id when it is a sane token, otherwise mint one.
 * A hostile value (newlines, kilobytes) is replaced rather than reflected into headers and logs.
 */
export function requestIdFrom(req: IncomingMessage): string {
  const header = req.headers['x-request-id'];
  const value = Array.isArray(header) ? header[0] : header;
  return value && ACCEPTABLE.test(value) ? value : randomUUID();
}
