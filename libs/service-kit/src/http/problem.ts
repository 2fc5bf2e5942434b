import { PROBLEM_TYPE_BASE } from '@invoicing/contracts';
/** One field-level validation failure (docs/api.md section 8). */
export interface FieldError {
  field: string;
  code: string;
  message: string;
}

/** RFC 9457 problem details as this API sends them. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  request_id?: string;
  errors?: FieldError[];
}

const TITLES: Record<number, [slug: string, title: string]> = {
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

/** Base of problem `type` URIs: the contracts' own, re-exported for the services. */
export { PROBLEM_TYPE_BASE };

export function problemFor(status: number, detail: string, errors?: FieldError[]): ProblemDetails {
  const [slug, title] = TITLES[status] ?? (status >= 500 ? TITLES[500] : TITLES[400]);
  const problem: ProblemDetails = { type: `${PROBLEM_TYPE_BASE}${slug}`, title, status, detail };
  if (errors && errors.length > 0) problem.errors = errors;
  return problem;
}

/**
 * Throw from a service to answer with a problem+json. `headers` are added to the response
 * (`Retry-After`, `WWW-Authenticate`, `Location`...).
 */
export class ProblemException extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers: Record<string, string> = {},
  ) {
    // A problem is an answer, not a fault: its stack is never logged or sent, and capturing one on
    // every 401/404 showed in the read path's profile (docs/perf.md).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = limit;
    this.name = 'ProblemException';
  }

  static validation(errors: FieldError[], detail = 'The request body has invalid fields.'): ProblemException {
    return new ProblemException(422, detail, errors);
  }

  static notFound(what = 'resource'): ProblemException {
    return new ProblemException(404, `No such ${what}.`);
  }

  static unavailable(detail = 'A dependency is unavailable; retry shortly.'): ProblemException {
    return new ProblemException(503, detail, undefined, { 'Retry-After': '1' });
  }
}
