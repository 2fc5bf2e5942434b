import { addressesText, MAX_ALLOWED_IPS, parseAddressLines, withNamedAddresses } from './allowed-ips.js';
import { AppContext } from './app-context.js';
import { announce, byId, onDialogClosed } from './dom.js';
import { clearFormErrors, FieldProblem, isBusy } from './form-errors.js';
import { submitForm } from './form-submit.js';
import { handleKeyFailure, KeyListHooks } from './key-dialogs.js';
import { ApiKey, settingsApi } from './settings-api.client.js';

/**
 * Edit allowed IPs: the key's list in a textarea, one entry a line; Save sends the whole list (PATCH)
 * and the card shows what the server kept, in its canonical form. Errors appear beside the textarea,
 * each naming its entry.
 */
export function setupAllowedIpsDialog(ctx: AppContext, hooks: KeyListHooks): { open(key: ApiKey, trigger: HTMLButtonElement): void } {
  const dialog = byId<HTMLDialogElement>('ips-dialog');
  const form = byId<HTMLFormElement>('ips-form');
  const textarea = byId<HTMLTextAreaElement>('ips-allowed-ips');
  let pending: { key: ApiKey; trigger: HTMLButtonElement } | null = null;

  function open(key: ApiKey, trigger: HTMLButtonElement): void {
    pending = { key, trigger };
    byId('ips-key-name').textContent = key.name;
    form.reset();
    clearFormErrors(form);
    textarea.value = addressesText(key.allowed_ips);
    dialog.showModal();
    textarea.focus();
  }

  function close(): void {
    if (dialog.open) dialog.close();
  }

  onDialogClosed(dialog, () => {
    if (pending) hooks.returnFocus(pending.key.id, pending.trigger);
    pending = null;
  });
  dialog.addEventListener('cancel', (event) => {
    if (isBusy(form)) event.preventDefault();
  });
  byId('ips-cancel').addEventListener('click', () => {
    if (!isBusy(form)) close();
  });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!pending) return;
    const { key } = pending;
    const addresses = parseAddressLines(textarea.value);
    const problems: FieldProblem[] =
      addresses.length > MAX_ALLOWED_IPS ? [{ field: 'allowed_ips', message: `Enter at most ${MAX_ALLOWED_IPS} addresses.` }] : [];
    void submitForm(
      form,
      problems,
      'Saving…',
      async () => {
        let updated: ApiKey;
        try {
          updated = await settingsApi.updateKey(key.id, { allowed_ips: addresses.map((a) => a.value) });
        } catch (error) {
          throw withNamedAddresses(error, addresses);
        }
        hooks.replace(updated);
        close();
        announce(
          updated.allowed_ips.length === 0
            ? `Key “${key.name}” can now get tokens from any address.`
            : `Key “${key.name}” can now get tokens only from the listed addresses.`,
          'success',
        );
      },
      { handled: (error) => handleKeyFailure(ctx, hooks, dialog, key, error) },
    );
  });

  return { open };
}
