/**
 * Base of problem `type` URIs (RFC 9457); each names a documented error class (docs/api.md section 8).
 * Here, not in service-kit, because the gateway's nginx configuration states it too, as it states
 * the titles below.
 */
export const PROBLEM_TYPE_BASE = 'https://docs.invoicing.example/problems/';

/** Each status this API answers with a problem: the `type` slug after PROBLEM_TYPE_BASE, and the title. */
export const PROBLEM_TITLES: Readonly<Record<number, readonly [slug: string, title: string]>> = {
  400: ['bad-request', 'Bad request'],
  401: ['unauthorized', 'Unauthorized'],
  403: ['forbidden', 'Forbidden'],
  404: ['not-found', 'Not found'],
  405: ['method-not-allowed', 'Method not allowed'],
  408: ['request-timeout', 'Request timeout'],
  409: ['conflict', 'Conflict'],
  413: ['payload-too-large', 'Payload too large'],
  414: ['uri-too-long', 'URI too long'],
  415: ['unsupported-media-type', 'Unsupported media type'],
  422: ['validation-failed', 'Validation failed'],
  429: ['rate-limited', 'Too many requests'],
  431: ['headers-too-large', 'Request headers too large'],
  500: ['internal', 'Internal server error'],
  502: ['bad-gateway', 'Bad gateway'],
  503: ['unavailable', 'Service unavailable'],
  504: ['gateway-timeout', 'Gateway timeout'],
};
