import { PROBLEM_TYPE_BASE, ProblemDetails, problemFor } from '@invoicing/service-kit';

/**
 * `problemFor` knows no title for the statuses only the gateway produces and would call 502 and 504
 * an "Internal server error", 414 a "Bad request"; same shape, own type and title. (Better in
 * service-kit's table: then this override goes away.)
 */
const GATEWAY_TITLES: Record<number, [slug: string, title: string]> = {
  414: ['uri-too-long', 'URI too long'],
  502: ['bad-gateway', 'Bad gateway'],
  504: ['gateway-timeout', 'Gateway timeout'],
};

/** The gateway's own errors, in exactly the services' problem+json format (docs/api.md section 8). */
export function gatewayProblem(status: number, detail: string, requestId: string): ProblemDetails {
  const problem = problemFor(status, detail);
  const own = GATEWAY_TITLES[status];
  if (own) {
    problem.type = `${PROBLEM_TYPE_BASE}${own[0]}`;
    problem.title = own[1];
  }
  problem.request_id = requestId;
  return problem;
}

/** The part of a Fastify reply this needs: the proxy's hooks hand over a reply of a wider type. */
export interface ProblemReply {
  request: { id: unknown };
  header(name: string, value: string): unknown;
  code(status: number): unknown;
  type(contentType: string): unknown;
  send(payload: unknown): unknown;
}

export function sendGatewayProblem(reply: ProblemReply, status: number, detail: string): void {
  // A 503 invites a retry, as the services' own 503s do.
  if (status === 503) reply.header('Retry-After', '1');
  reply.header('Cache-Control', 'no-store');
  reply.code(status);
  reply.type('application/problem+json');
  reply.send(gatewayProblem(status, detail, String(reply.request.id)));
}

export interface UpstreamFailure {
  status: 502 | 503 | 504;
  detail: string;
}

/** Codes that mean "nobody is listening there (yet)": the service is down or still starting. */
const UNAVAILABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'FST_REPLY_FROM_SERVICE_UNAVAILABLE']);
const TIMEOUT = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
  'FST_REPLY_FROM_GATEWAY_TIMEOUT',
  'FST_REPLY_FROM_TIMEOUT',
]);

/**
 * Classifies a proxy error by the codes along its `cause` chain (reply-from wraps the socket error):
 * unreachable → 503 (retry shortly), too slow → 504, anything else (reset, garbage) → 502.
 */
export function classifyUpstreamError(error: unknown): UpstreamFailure {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (typeof code === 'string') codes.push(code);
    current = cause;
  }
  if (codes.some((c) => TIMEOUT.has(c))) return { status: 504, detail: 'The upstream service did not answer in time.' };
  if (codes.some((c) => UNAVAILABLE.has(c))) return { status: 503, detail: 'The upstream service is unavailable; retry shortly.' };
  return { status: 502, detail: 'The upstream service failed to answer.' };
}
