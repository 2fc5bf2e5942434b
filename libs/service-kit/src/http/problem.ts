import { PROBLEM_TITLES, PROBLEM_TYPE_BASE } from '@invoicing/contracts';
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


/** Base of problem `type` URIs: the contracts' own, re-exported for the services. */
export { PROBLEM_TYPE_BASE };

export function problemFor(status: number, detail: string, errors?: FieldError[]): ProblemDetails {
  const [slug, title] = PROBLEM_TITLES[status] ?? (status >= 500 ? PROBLEM_TITLES[500] : PROBLEM_TITLES[400]);
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
