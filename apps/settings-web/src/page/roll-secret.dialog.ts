import { AppContext } from './app-context.js';
import { bindCopyButtons, clearCopyFeedback } from './clipboard.js';
import { byId, h, onDialogClosed } from './dom.js';
import { clearFormErrors, FieldProblem, isBusy } from './form-errors.js';
import { submitForm } from './form-submit.js';
import { previousSecretAccepted } from './format.js';
import { handleKeyFailure, KeyListHooks, withoutSecret } from './key-dialogs.js';
import { timeElement } from './key-card.js';
import { rollInput } from './roll-options.js';
import { ApiKey, RolledApiKey, settingsApi } from './settings-api.client.js';

/**
 * Roll secret: one dialog in two steps. First the choices (how long the current secret keeps
 * working, whether to end the key's sessions), then the new Secret Key, shown once with a copy
 * button, the same warning as at creation, and when the previous secret stops working. Closing the
 * dialog removes the secret from the document; the card is redrawn from the response without it.
 */
export function setupRollSecretDialog(ctx: AppContext, hooks: KeyListHooks): { open(key: ApiKey, trigger: HTMLButtonElement): void } {
  const dialog = byId<HTMLDialogElement>('roll-dialog');
  const form = byId<HTMLFormElement>('roll-form');
  const choose = byId('roll-choose');
  const result = byId('roll-result');
  const secret = byId('rolled-client-secret');
  let pending: { key: ApiKey; trigger: HTMLButtonElement } | null = null;

  bindCopyButtons(result);

  function step(which: 'choose' | 'result'): void {
    choose.hidden = which !== 'choose';
    result.hidden = which !== 'result';
    // The dialog's name and description follow the step, so a screen reader announces the right one.
    dialog.setAttribute('aria-labelledby', which === 'choose' ? 'roll-title' : 'roll-result-title');
    dialog.setAttribute('aria-describedby', which === 'choose' ? 'roll-description' : 'rolled-warning');
  }

  // Ending the sessions is for a leak: the old secret stops at once too, so the overlap is fixed.
  const endSessions = byId<HTMLInputElement>('roll-end-sessions');
  const overlaps = () => [...form.querySelectorAll<HTMLInputElement>('input[name="overlap"]')];
  endSessions.addEventListener('change', () => {
    for (const radio of overlaps()) {
      if (endSessions.checked && radio.value === '0') radio.checked = true;
      radio.disabled = endSessions.checked && radio.value !== '0';
    }
  });

  function open(key: ApiKey, trigger: HTMLButtonElement): void {
    pending = { key, trigger };
    byId('roll-key-name').textContent = key.name;
    byId('roll-client-id').textContent = key.client_id;
    form.reset();
    for (const radio of overlaps()) radio.disabled = false;
    clearFormErrors(form);
    step('choose');
    dialog.showModal();
    // The first decision has focus: the overlap, on its default (a planned rotation, no outage).
    form.querySelector<HTMLInputElement>('input[name="overlap"]:checked')?.focus();
  }

  function forgetSecret(): void {
    secret.textContent = '';
    byId('rolled-client-id').textContent = '';
    byId('rolled-previous').replaceChildren();
    clearCopyFeedback(result);
    window.getSelection()?.removeAllRanges();
  }

  function close(): void {
    if (dialog.open) dialog.close();
  }

  onDialogClosed(dialog, () => {
    forgetSecret();
    if (pending) hooks.returnFocus(pending.key.id, pending.trigger);
    pending = null;
  });
  // Escape closes natively, except halfway through the request: its answer carries the one secret.
  dialog.addEventListener('cancel', (event) => {
    if (isBusy(form)) event.preventDefault();
  });
  byId('roll-cancel').addEventListener('click', () => {
    if (!isBusy(form)) close();
  });
  byId('roll-done').addEventListener('click', close);

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!pending) return;
    const { key } = pending;
    const overlap = form.querySelector<HTMLInputElement>('input[name="overlap"]:checked')?.value ?? null;
    const endSessions = byId<HTMLInputElement>('roll-end-sessions').checked;
    const input = rollInput(overlap, endSessions);
    const problems: FieldProblem[] = input ? [] : [{ field: 'previous_secret_expires_in', message: 'Choose when the current secret stops working.' }];
    void submitForm(
      form,
      problems,
      'Rolling…',
      async () => {
        if (input) rolled(key, await settingsApi.rollKey(key.id, input), endSessions);
      },
      { handled: (error) => handleKeyFailure(ctx, hooks, dialog, key, error) },
    );
  });

  function rolled(key: ApiKey, response: RolledApiKey, askedToEndSessions: boolean): void {
    hooks.replace(withoutSecret(response));
    byId('rolled-key-name').textContent = key.name;
    byId('rolled-client-id').textContent = response.client_id;
    secret.textContent = response.client_secret;
    const until = response.previous_secret_expires_at;
    // One span: the dd is a grid, whose every child would be a line of its own.
    byId('rolled-previous').replaceChildren(
      h(
        'span',
        {},
        ...(until !== null && previousSecretAccepted(until)
          ? ['The previous secret keeps working until ', timeElement(until), '. Update your integrations before then.']
          : ['The previous secret no longer works.']),
        // The server says whether the sessions really ended: after a leak, a wrong "done" is worse than none.
        askedToEndSessions && response.sessions_ended ? ' Tokens issued before the roll are no longer accepted.' : null,
      ),
      ...(askedToEndSessions && !response.sessions_ended
        ? [
            h(
              'strong',
              { class: 'rolled-warning' },
              ' The sessions could not be ended just now, so tokens issued before the roll still work. Roll again with “End all sessions now” to end them.',
            ),
          ]
        : []),
    );
    step('result');
    byId('roll-result-title').focus();
  }

  return { open };
}
