import { PROBLEM_TITLES, PROBLEM_TYPE_BASE } from '@invoicing/contracts';
import { FieldError, PlatformError, RETRY_SHORTLY } from './platform-error';

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

function problemClass(status: number): readonly [slug: string, title: string] {
  return PROBLEM_TITLES[status] ?? (status >= 500 ? PROBLEM_TITLES[500] : PROBLEM_TITLES[400]);
}

export function problemFor(status: number, detail: string, errors?: FieldError[]): ProblemDetails {
  const [slug, title] = problemClass(status);
  const problem: ProblemDetails = { type: `${PROBLEM_TYPE_BASE}${slug}`, title, status, detail };
  if (errors && errors.length > 0) problem.errors = errors;
  return problem;
}

/**
 * The plain answer: a status and a detail (and the fields at fault, the headers), whose `code` is the
 * problem type's slug (`not-found`, `validation-failed`...). What the resource services and the
 * settings area throw; a refusal with a meaning of its own (an OAuth error, a key that can no longer
 * change) is a subclass of {@link PlatformError} instead.
 */
export class ProblemException extends PlatformError {
  constructor(status: number, detail: string, errors?: FieldError[], headers?: Readonly<Record<string, string>>) {
    super(status, problemClass(status)[0], detail, { errors, headers });
  }

  static validation(errors: FieldError[], detail = 'The request body has invalid fields.'): ProblemException {
    return new ProblemException(422, detail, errors);
  }

  static notFound(what = 'resource'): ProblemException {
    return new ProblemException(404, `No such ${what}.`);
  }

  static unavailable(detail = 'A dependency is unavailable; retry shortly.'): ProblemException {
    return new ProblemException(503, detail, undefined, RETRY_SHORTLY);
  }
}
