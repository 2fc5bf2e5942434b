import { Logger, PayloadTooLargeException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendOAuthError } from './oauth-error.renderer';

/** Records what the renderer sends. */
function render(exception: unknown): { status: number; body: unknown } {
  const sent = { status: 0, body: undefined as unknown };
  const reply = {
    header: () => reply,
    type: () => reply,
    status: (s: number) => ((sent.status = s), reply),
    send: (b: unknown) => ((sent.body = b), reply),
  };
  sendOAuthError(exception, { id: 'r1' } as FastifyRequest, reply as unknown as FastifyReply, new Logger('test'));
  return sent;
}

describe(sendOAuthError.name, () => {
  it('keeps 413 for a body over the limit, from Fastify or from Nest, so that proxies read it instead of a reset', () => {
    const fromFastify = Object.assign(new Error('too large'), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' });
    for (const e of [fromFastify, new PayloadTooLargeException()]) {
      expect(render(e)).toEqual({ status: 413, body: { error: 'invalid_request', error_description: 'The request body is too large.' } });
    }
  });

  it('answers other refusals before a handler as 400 invalid_request, and a bug as 500 server_error without details', () => {
    expect(render(Object.assign(new Error('x'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' })).status).toBe(400);
    expect(render(new TypeError('secret internals'))).toEqual({ status: 500, body: { error: 'server_error', error_description: 'An unexpected error occurred.' } });
  });
});
