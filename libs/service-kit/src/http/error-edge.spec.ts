import { BadRequestException, HttpException, Logger, NotFoundException, PayloadTooLargeException, ServiceUnavailableException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DependencyUnavailableError } from './dependency-failure';
import { ErrorForm, sendError } from './error-edge';
import { PlatformError } from './platform-error';
import { ProblemException } from './problem';

/** Records what the edge writes. */
function render(exception: unknown, form: ErrorForm, preset: Record<string, string> = {}) {
  const sent = { status: 0, type: '', headers: { ...preset } as Record<string, string>, body: undefined as unknown };
  const reply = {
    header: (name: string, value: string) => ((sent.headers[name.toLowerCase()] = value), reply),
    hasHeader: (name: string) => name.toLowerCase() in sent.headers,
    type: (t: string) => ((sent.type = t), reply),
    status: (s: number) => ((sent.status = s), reply),
    send: (b: unknown) => ((sent.body = b), reply),
  };
  const logger = new Logger('test');
  const warn = jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
  const error = jest.spyOn(logger, 'error').mockImplementation(() => undefined);
  sendError(exception, { id: 'r1' } as FastifyRequest, reply as unknown as FastifyReply, logger, form);
  return { ...sent, logged: { warn: warn.mock.calls.length, error: error.mock.calls.length } };
}

const fastifyError = (statusCode: number, code: string) => Object.assign(new Error('raw internals'), { statusCode, code });
const NO_CACHE = { 'cache-control': 'no-store', pragma: 'no-cache' };

describe('the edge: one PlatformError, two forms', () => {
  const refusal = new PlatformError(401, 'invalid_client', 'Client authentication failed.', {
    oauthError: 'invalid_client',
    headers: { 'WWW-Authenticate': 'Basic realm="invoicing"' },
  });

  it('writes a PlatformError as RFC 6749 section 5.2 on an OAuth endpoint, never cached', () => {
    expect(render(refusal, 'oauth')).toEqual({
      status: 401,
      type: 'application/json',
      headers: { 'www-authenticate': 'Basic realm="invoicing"', ...NO_CACHE },
      body: { error: 'invalid_client', error_description: 'Client authentication failed.' },
      logged: { warn: 0, error: 0 },
    });
  });

  it('writes the same error as RFC 9457 problem+json elsewhere, with the request id and the fields at fault', () => {
    expect(render(refusal, 'problem')).toMatchObject({
      status: 401,
      type: 'application/problem+json',
      headers: { 'www-authenticate': 'Basic realm="invoicing"' },
      body: { type: 'https://docs.invoicing.example/problems/unauthorized', title: 'Unauthorized', status: 401, detail: 'Client authentication failed.', request_id: 'r1' },
    });
    const invalid = ProblemException.validation([{ field: 'name', code: 'length', message: 'must be 1 to 100 characters' }]);
    expect(render(invalid, 'problem').body).toEqual({
      type: 'https://docs.invoicing.example/problems/validation-failed',
      title: 'Validation failed',
      status: 422,
      detail: 'The request body has invalid fields.',
      errors: [{ field: 'name', code: 'length', message: 'must be 1 to 100 characters' }],
      request_id: 'r1',
    });
  });

  it('reads an answer with no OAuth code of its own as the closest code of its status', () => {
    expect(render(new ProblemException(409, 'Conflict.'), 'oauth').body).toEqual({ error: 'invalid_request', error_description: 'Conflict.' });
    expect(render(ProblemException.unavailable(), 'oauth')).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' }, headers: { 'retry-after': '1' } });
  });

  it('captures no stack for an answer (ADR 0015), and names it after its class', () => {
    expect(refusal.stack).toBe('PlatformError: Client authentication failed.');
    expect(new ProblemException(404, 'No such thing.').name).toBe('ProblemException');
  });
});

describe('outages', () => {
  const ours = new DependencyUnavailableError('Redis: 0 of 1 replicas acknowledged a session write within 200 ms');
  const driver = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6399'), { code: 'ECONNREFUSED' });

  it('answer 503 with Retry-After in each form, saying nothing of the dependency, and are logged as warnings', () => {
    for (const e of [ours, driver]) {
      expect(render(e, 'oauth')).toEqual({
        status: 503,
        type: 'application/json',
        headers: { 'retry-after': '1', ...NO_CACHE },
        body: { error: 'temporarily_unavailable', error_description: 'The service is temporarily unavailable; retry shortly.' },
        logged: { warn: 1, error: 0 },
      });
      expect(render(e, 'problem')).toMatchObject({
        status: 503,
        headers: { 'retry-after': '1' },
        body: { status: 503, detail: 'A dependency is unavailable; retry shortly.', request_id: 'r1' },
        logged: { warn: 1, error: 0 },
      });
    }
  });

  it('DependencyUnavailableError is a PlatformError (503) whose message is for the log, and keeps its stack', () => {
    expect(ours).toBeInstanceOf(PlatformError);
    expect({ status: ours.status, oauthError: ours.oauthError, detail: ours.detail }).toEqual({
      status: 503,
      oauthError: 'temporarily_unavailable',
      detail: 'A dependency is unavailable; retry shortly.',
    });
    expect(ours.message).toMatch(/replicas acknowledged/);
    expect(ours.stack).toMatch(/error-edge\.spec/);
  });

  it('keeps a Retry-After already set on a problem+json 503', () => {
    expect(render(new ServiceUnavailableException(), 'problem', { 'retry-after': '7' }).headers['retry-after']).toBe('7');
  });
});

describe('what is not a PlatformError, as each contract describes it', () => {
  it('keeps 413 for a body over the limit, from Fastify or from Nest, so that proxies read it instead of a reset', () => {
    for (const e of [fastifyError(413, 'FST_ERR_CTP_BODY_TOO_LARGE'), new PayloadTooLargeException()]) {
      expect(render(e, 'oauth')).toMatchObject({ status: 413, body: { error: 'invalid_request', error_description: 'The request body is too large.' } });
    }
    expect(render(fastifyError(413, 'FST_ERR_CTP_BODY_TOO_LARGE'), 'problem').body).toMatchObject({ status: 413, detail: 'The request body exceeds the 1 MiB limit.' });
    expect(render(new PayloadTooLargeException(), 'problem').body).toMatchObject({ status: 413, detail: 'Payload Too Large' });
  });

  it("on an OAuth endpoint, turns Fastify's refusals into 400 invalid_request whatever their status", () => {
    const jsonOrForm = 'The body must be application/json or application/x-www-form-urlencoded, sent with that Content-Type.';
    expect(render(fastifyError(415, 'FST_ERR_CTP_INVALID_MEDIA_TYPE'), 'oauth')).toMatchObject({ status: 400, body: { error: 'invalid_request', error_description: jsonOrForm } });
    // The same refusal as a running app hands it over: Nest turns Fastify's error into an HttpException
    // of its status and message (a body without any Content-Type).
    expect(render(new HttpException('Unsupported Media Type', 415), 'oauth')).toMatchObject({ status: 400, body: { error: 'invalid_request', error_description: jsonOrForm } });
    expect(render(new HttpException('Unsupported Media Type', 415), 'problem').body).toMatchObject({
      status: 415,
      detail: 'The request body must be application/json, sent with Content-Type: application/json.',
    });
    expect(render(fastifyError(400, 'FST_ERR_CTP_INVALID_JSON_BODY'), 'oauth')).toMatchObject({ status: 400, body: { error_description: 'The request body could not be parsed.' } });
    expect(render(fastifyError(415, 'FST_ERR_CTP_INVALID_MEDIA_TYPE'), 'problem').body).toMatchObject({
      status: 415,
      detail: 'The request body must be application/json, sent with Content-Type: application/json.',
    });
  });

  it("Nest's routing and parsing errors", () => {
    expect(render(new NotFoundException('Cannot GET /api/v1/auth/x'), 'oauth')).toMatchObject({ status: 404, body: { error: 'invalid_request', error_description: 'No such endpoint.' } });
    expect(render(new NotFoundException('Cannot GET /x'), 'problem').body).toMatchObject({ status: 404, detail: 'No such resource.' });
    expect(render(new BadRequestException('Unexpected token'), 'oauth').body).toEqual({ error: 'invalid_request', error_description: 'The request body could not be parsed.' });
    expect(render(new BadRequestException('Unexpected token'), 'problem').body).toMatchObject({ status: 400, detail: 'Unexpected token' });
  });

  it('answers a bug as 500 without details, and logs it as an error', () => {
    expect(render(new TypeError('secret internals'), 'oauth')).toMatchObject({
      status: 500,
      body: { error: 'server_error', error_description: 'An unexpected error occurred.' },
      logged: { warn: 0, error: 1 },
    });
    expect(render(new TypeError('secret internals'), 'problem')).toMatchObject({
      status: 500,
      body: { detail: 'An unexpected error occurred. Quote the request_id when you report it.' },
      logged: { warn: 0, error: 1 },
    });
  });
});
