/**
 * Errors from the auth service arrive as RFC 9457 problem+json. These helpers turn any failed
 * response, including one from a proxy that is not problem+json at all, into something the page can
 * show: a sentence for the form and a message per field.
 */

export interface FieldError {
  field: string;
  code: string;
  message: string;
}

export interface Problem {
  status: number;
  title: string;
  detail: string;
  request_id?: string;
  errors: FieldError[];
}

/** What a person is told when the server gave no usable `detail` (a gateway error page, say). */
const FALLBACK_DETAIL: Record<number, string> = {
  400: 'The request was not understood. Reload the page and try again.',
  401: 'You are not logged in.',
  403: 'The request was refused. Reload the page and try again.',
  404: 'It no longer exists.',
  409: 'It conflicts with something that already exists.',
  413: 'What you sent is too large.',
  422: 'Some fields are not valid.',
  429: 'Too many attempts.',
  502: 'The service is not reachable right now. Try again in a moment.',
  503: 'The service is busy or starting. Try again in a moment.',
  504: 'The service took too long to answer. Try again in a moment.',
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asFieldErrors(value: unknown): FieldError[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((e) => ({
    field: typeof e.field === 'string' ? e.field : '',
    code: typeof e.code === 'string' ? e.code : 'invalid',
    message: typeof e.message === 'string' && e.message ? e.message : 'This value is not valid.',
  }));
}

/** Builds a Problem from a failed response's status and parsed body (or null when it was not JSON). */
export function toProblem(status: number, body: unknown): Problem {
  const b = isRecord(body) ? body : {};
  const detail =
    typeof b.detail === 'string' && b.detail.trim()
      ? b.detail
      : (FALLBACK_DETAIL[status] ?? (status >= 500 ? 'Something went wrong on our side. Try again in a moment.' : 'The request failed.'));
  return {
    status,
    title: typeof b.title === 'string' ? b.title : '',
    detail,
    request_id: typeof b.request_id === 'string' ? b.request_id : undefined,
    errors: asFieldErrors(b.errors),
  };
}

/**
 * The form field an error belongs to: `scopes[2]`, `scopes.2` and `/scopes/2` all point at the
 * `scopes` group, `password` at the password input.
 */
export function fieldNameOf(field: string): string {
  const trimmed = field.replace(/^[/$.]+/, '');
  return trimmed.split(/[.[/]/, 1)[0] ?? '';
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date); null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * Server field messages are fragments meant to follow the field's name ("is required", "must be an
 * email address"); the page's own are whole sentences. Either way a person reads one sentence:
 * "Email must be an email address."
 */
export function fieldSentence(label: string, message: string): string {
  const text = message.trim();
  if (!text) return `${label} is not valid.`;
  const sentence = /^(is|are|must|has|have|should|cannot|can't|contains|does|was|needs)\b/.test(text)
    ? `${label} ${text}`
    : text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/**
 * The sentence shown above a form. Adds the wait on 429 and, for server faults, the request id a
 * person can quote to support.
 */
export function problemMessage(problem: Problem, retryAfterSeconds: number | null = null): string {
  let message = problem.detail;
  // The wait is added unless the server's own sentence already states it.
  if (problem.status === 429 && retryAfterSeconds !== null && !message.includes(String(retryAfterSeconds))) {
    message += ` Try again in ${retryAfterSeconds} ${retryAfterSeconds === 1 ? 'second' : 'seconds'}.`;
  }
  if (problem.status >= 500 && problem.request_id) message += ` (Reference: ${problem.request_id})`;
  return message;
}
