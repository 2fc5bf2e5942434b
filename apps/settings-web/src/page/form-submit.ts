import { errorMessage } from './app-context.js';
import { clearFormErrors, FieldProblem, isBusy, setFormError, showFieldErrors, whileBusy } from './form-errors.js';
import { ApiError } from './settings-api.client.js';

export interface SubmitOptions {
  /** Takes over a failure before the form shows it (e.g. a lost session); true when it did. */
  handled?(error: unknown): boolean;
  /** Something to offer after the form's message for this failure (e.g. a link), or null. */
  after?(error: unknown): Node | null;
}

/**
 * The one submit path of the page's forms: a second submit while one is running does nothing;
 * problems found in the page are shown beside their fields and nothing is sent; otherwise `call`
 * runs with the submit button busy, and a failure's field problems go beside their fields, the rest
 * into the form's message.
 */
export async function submitForm(
  form: HTMLFormElement,
  problems: readonly FieldProblem[],
  busyLabel: string,
  call: () => Promise<void>,
  options: SubmitOptions = {},
): Promise<void> {
  if (isBusy(form)) return;
  clearFormErrors(form);
  if (problems.length > 0) {
    setFormError(form, 'Check the highlighted fields.');
    showFieldErrors(form, problems);
    return;
  }
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  if (!button) return;
  try {
    await whileBusy(form, button, busyLabel, call);
  } catch (error) {
    if (options.handled?.(error)) return;
    const unmatched = error instanceof ApiError ? showFieldErrors(form, error.problem.errors) : [];
    const after = options.after?.(error) ?? null;
    setFormError(form, [errorMessage(error), ...unmatched].join(' '), ...(after ? [' ', after] : []));
  }
}
