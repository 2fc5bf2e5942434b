import { toggleIdRef } from './dom.js';
import { FieldError, fieldNameOf, fieldSentence } from './problem-details.js';

/**
 * Error display shared by every form. A form holds one `.form-error` box (`role="alert"`) for the
 * sentence and, per field, a container `[data-field=name]` with an empty `.field-error` paragraph and
 * one `[data-invalid-target]` (the input, or the fieldset of a checkbox group) that gets
 * `aria-invalid` and `aria-describedby` pointing at the message.
 */

function formErrorBox(form: HTMLFormElement): HTMLElement {
  const box = form.querySelector<HTMLElement>('.form-error');
  if (!box) throw new Error(`form #${form.id} has no .form-error box`);
  return box;
}

export function clearFormErrors(form: HTMLFormElement): void {
  formErrorBox(form).replaceChildren();
  for (const container of form.querySelectorAll<HTMLElement>('[data-field]')) setFieldError(container, null);
}

export function setFormError(form: HTMLFormElement, message: string, ...extra: (Node | string)[]): void {
  formErrorBox(form).replaceChildren(message, ...extra);
}

/** The element that carries the field's ARIA state: the container itself when it is a fieldset. */
function invalidTargetOf(container: HTMLElement): HTMLElement | null {
  return container.matches('[data-invalid-target]') ? container : container.querySelector<HTMLElement>('[data-invalid-target]');
}

function setFieldError(container: HTMLElement, message: string | null): void {
  const paragraph = container.querySelector<HTMLElement>('.field-error');
  const target = invalidTargetOf(container);
  if (!paragraph || !target) return;
  paragraph.textContent = message ?? '';
  container.classList.toggle('field--invalid', message !== null);
  toggleIdRef(target, 'aria-describedby', paragraph.id, message !== null);
  // aria-invalid belongs on form controls; a checkbox group announces its message via describedby.
  if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) {
    if (message === null) target.removeAttribute('aria-invalid');
    else target.setAttribute('aria-invalid', 'true');
  }
}

/** A problem with one field: found in the page before sending, or named by the API's 422. */
export type FieldProblem = Pick<FieldError, 'field' | 'message'>;

/**
 * Shows each error next to its field, moves focus to the first invalid field (a keyboard or
 * screen-reader user lands on the problem), and returns the messages that belong to no field.
 */
export function showFieldErrors(form: HTMLFormElement, errors: readonly FieldProblem[]): string[] {
  const unmatched: string[] = [];
  const messages = new Map<HTMLElement, string[]>();
  for (const error of errors) {
    const name = fieldNameOf(error.field);
    const container = name ? form.querySelector<HTMLElement>(`[data-field="${CSS.escape(name)}"]`) : null;
    if (!container) {
      unmatched.push(fieldSentence(name || 'The request', error.message));
      continue;
    }
    messages.set(container, [...(messages.get(container) ?? []), fieldSentence(labelOf(container), error.message)]);
  }
  let first: HTMLElement | null = null;
  for (const [container, list] of messages) {
    setFieldError(container, list.join(' '));
    first ??= container;
  }
  if (first) focusField(first);
  return unmatched;
}

/** The visible name of a field: its label, or the legend of a checkbox group. */
function labelOf(container: HTMLElement): string {
  const label = container.querySelector(':scope > label, :scope > legend');
  return label?.textContent?.trim() || container.dataset.field || 'This field';
}

/**
 * A group's message takes focus to its first input, or to the control inside it that is marked
 * `data-error-focus` while that is enabled (Expires: the date input, when a date was chosen).
 */
function focusField(container: HTMLElement): void {
  const target = invalidTargetOf(container);
  const focusable =
    target instanceof HTMLFieldSetElement
      ? (target.querySelector<HTMLElement>('[data-error-focus]:not(:disabled)') ?? target.querySelector<HTMLElement>('input'))
      : target;
  focusable?.focus();
}

/**
 * Runs `work` with the form marked busy: the submit button says what is happening and ignores
 * further presses. It stays focusable (aria-disabled, not disabled) so focus is not thrown back to
 * the top of the page mid-submit.
 */
export async function whileBusy<T>(form: HTMLFormElement, button: HTMLButtonElement, busyLabel: string, work: () => Promise<T>): Promise<T> {
  const label = button.textContent ?? '';
  form.setAttribute('aria-busy', 'true');
  form.dataset.busy = 'true';
  button.setAttribute('aria-disabled', 'true');
  button.textContent = busyLabel;
  try {
    return await work();
  } finally {
    form.removeAttribute('aria-busy');
    delete form.dataset.busy;
    button.removeAttribute('aria-disabled');
    button.textContent = label;
  }
}

export function isBusy(form: HTMLFormElement): boolean {
  return form.dataset.busy === 'true';
}
