import { Injectable } from '@nestjs/common';
import { ProblemException } from '@invoicing/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DashboardUser } from '../dashboard-sessions';
import { SessionCookies } from '../session-cookies';
import { WebhookAccessTokens } from './webhook-access-token';
import { forwardedQuery, upstreamPath, WEBHOOK_ROUTES, WebhookCall } from './webhook-routes';
import { WebhookServiceClient } from './webhook-service.client';

/**
 * The largest body forwarded. The largest valid one (an https URL of 2,048 characters, a
 * description of 500, every event type) is under 4 KiB; anything bigger is refused here, unread by
 * the webhook service.
 */
export const MAX_FORWARDED_BODY_BYTES = 16 * 1024;

/**
 * Deeper than any body the webhook service takes (`{"enabled_events": [...]}` is two levels). A
 * deeper one is refused before it is serialized again: `JSON.stringify` recurses, and a
 * 10,000-deep array that Fastify's parser accepted overflowed its stack (a 500, found by the
 * hostile-input corpus).
 */
export const MAX_FORWARDED_BODY_DEPTH = 8;

/**
 * One settings call, forwarded (ADR 0038): the webhook service's path for it (a malformed endpoint id
 * answers 404 here), its query string when it takes one, its JSON body when it takes one, with an
 * access token minted for the signed-in user's organization and this call's scope alone; then the
 * webhook service's answer, status and body unchanged, never cached.
 */
@Injectable()
export class WebhookSettingsProxy {
  constructor(
    private readonly tokens: WebhookAccessTokens,
    private readonly client: WebhookServiceClient,
    private readonly cookies: SessionCookies,
  ) {}

  async forward(call: WebhookCall, user: DashboardUser, request: FastifyRequest, reply: FastifyReply, id?: string): Promise<void> {
    const route = WEBHOOK_ROUTES[call];
    const path = upstreamPath(call, id);
    if (path === null) throw ProblemException.notFound('webhook endpoint');
    const query = forwardedQuery(call, request.url);
    if (query === null) throw new ProblemException(414, 'The query string is too long.');
    const body = route.body ? bodyOf(request) : undefined;
    const session = this.cookies.session(request);
    // DashboardSessionGuard found the session by this cookie; without one there is no user.
    if (!session) throw new ProblemException(401, 'Sign in to continue.');
    const answer = await this.client.send({
      method: route.method,
      path,
      query,
      body,
      token: this.tokens.mint(user, session, route.scope),
      requestId: String(request.id),
    });
    void reply.status(answer.status).header('Content-Type', answer.contentType).header('Cache-Control', 'no-store');
    if (answer.retryAfter !== null) void reply.header('Retry-After', answer.retryAfter);
    void reply.send(answer.body);
  }
}

/**
 * The request's JSON body, serialized again (Fastify has parsed it), or undefined when it has none
 * (the webhook service then says what is missing). Another media type is 415; more than
 * {@link MAX_FORWARDED_BODY_BYTES} is 413, deeper than {@link MAX_FORWARDED_BODY_DEPTH} 400.
 */
function bodyOf(request: FastifyRequest): string | undefined {
  if (request.body === undefined || request.body === null) return undefined;
  const type = String(request.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
  if (type !== 'application/json') throw new ProblemException(415, 'Send the body as application/json.');
  if (nestedDeeperThan(request.body, MAX_FORWARDED_BODY_DEPTH)) {
    throw new ProblemException(400, `The request body is nested more than ${MAX_FORWARDED_BODY_DEPTH} levels deep.`);
  }
  const text = JSON.stringify(request.body);
  if (Buffer.byteLength(text) > MAX_FORWARDED_BODY_BYTES) {
    throw new ProblemException(413, `The request body is larger than ${MAX_FORWARDED_BODY_BYTES} bytes.`);
  }
  return text;
}

/** Whether arrays and objects nest deeper than `limit` levels; walked with a stack of its own, not by recursion. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.value === null || typeof next.value !== 'object') continue;
    if (next.depth > limit) return true;
    for (const item of Array.isArray(next.value) ? next.value : Object.values(next.value)) pending.push({ value: item, depth: next.depth + 1 });
  }
  return false;
}
