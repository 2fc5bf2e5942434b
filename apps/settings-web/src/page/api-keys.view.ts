import { setupAllowedIpsDialog } from './allowed-ips.dialog.js';
import { AppContext, errorMessage, isUnauthorized } from './app-context.js';
import { announce, byId, h, onDialogClosed } from './dom.js';
import { KeyAction, keyCard } from './key-card.js';
import { KeyListHooks } from './key-dialogs.js';
import { setupRollSecretDialog } from './roll-secret.dialog.js';
import { ApiError, ApiKey, settingsApi } from './settings-api.client.js';

/** Settings → API: the key list, the revoke confirmation dialog, and the roll and allowed-IP dialogs. */
export function setupApiKeysView(ctx: AppContext): { load(): Promise<void> } {
  const list = byId<HTMLUListElement>('keys-list');
  const empty = byId('keys-empty');
  const problem = byId('keys-error');
  const dialog = byId<HTMLDialogElement>('revoke-dialog');
  const confirm = byId<HTMLButtonElement>('revoke-confirm');
  const dialogError = byId('revoke-error');
  let pending: { key: ApiKey; trigger: HTMLButtonElement } | null = null;

  const cardOf = (id: string): HTMLElement | null => list.querySelector<HTMLElement>(`[data-key-id="${CSS.escape(id)}"]`);

  const hooks: KeyListHooks = {
    replace(key) {
      cardOf(key.id)?.replaceWith(card(key));
    },
    async stale(key, error) {
      announce(`Key “${key.name}” was not changed. ${errorMessage(error)} The list has been refreshed.`, 'error');
      await load();
      cardOf(key.id)?.querySelector<HTMLElement>('.key-card__name')?.focus();
    },
    returnFocus(keyId, trigger) {
      if (trigger.isConnected) return trigger.focus();
      const again = cardOf(keyId);
      (again?.querySelector<HTMLElement>(`[data-action="${trigger.dataset.action ?? ''}"]`) ?? again?.querySelector<HTMLElement>('.key-card__name'))?.focus();
    },
  };
  const roll = setupRollSecretDialog(ctx, hooks);
  const allowedIps = setupAllowedIpsDialog(ctx, hooks);

  function act(action: KeyAction, key: ApiKey, trigger: HTMLButtonElement): void {
    if (action === 'roll') roll.open(key, trigger);
    else if (action === 'edit-ips') allowedIps.open(key, trigger);
    else open(key, trigger);
  }

  function card(key: ApiKey): HTMLLIElement {
    return keyCard(key, act);
  }

  /**
   * Replaces the cards. A keyboard user may be on a button of the list while it reloads (a
   * navigation loads it again under them): focus moves to the same action of the same key on the
   * new card, rather than falling back to the page's body.
   */
  function render(keys: ApiKey[]): void {
    const focused = list.contains(document.activeElement) ? (document.activeElement as HTMLElement) : null;
    const keyId = focused?.closest<HTMLElement>('[data-key-id]')?.dataset.keyId;
    const action = focused?.dataset.action;
    list.replaceChildren(...keys.map(card));
    empty.hidden = keys.length > 0;
    if (keyId) {
      const again = cardOf(keyId);
      (again?.querySelector<HTMLElement>(`[data-action="${CSS.escape(action ?? '')}"]`) ?? again?.querySelector<HTMLElement>('.key-card__name'))?.focus();
    }
  }

  async function load(): Promise<void> {
    problem.replaceChildren();
    list.setAttribute('aria-busy', 'true');
    if (list.childElementCount === 0) empty.hidden = true;
    try {
      render((await settingsApi.listKeys()).data);
    } catch (error) {
      if (isUnauthorized(error)) return ctx.sessionLost();
      const retry = h('button', { type: 'button', class: 'button' }, 'Try again');
      retry.addEventListener('click', () => void load());
      problem.replaceChildren(h('p', {}, `The keys could not be loaded. ${errorMessage(error)}`), retry);
    } finally {
      list.removeAttribute('aria-busy');
    }
  }

  function open(key: ApiKey, trigger: HTMLButtonElement): void {
    pending = { key, trigger };
    byId('revoke-key-name').textContent = key.name;
    byId('revoke-client-id').textContent = key.client_id;
    dialogError.replaceChildren();
    dialog.showModal();
    // The safe choice has focus: Enter or Space right after opening does not destroy anything.
    byId('revoke-cancel').focus();
  }

  function close(): void {
    if (dialog.open) dialog.close();
  }

  onDialogClosed(dialog, () => {
    // Back to where the person was, unless that button went away with the revocation.
    if (pending?.trigger.isConnected) pending.trigger.focus();
    pending = null;
  });
  byId('revoke-cancel').addEventListener('click', close);
  // Escape fires `cancel`, which closes a modal dialog natively; nothing extra is needed, except
  // refusing to close halfway through a revocation.
  dialog.addEventListener('cancel', (event) => {
    if (confirm.getAttribute('aria-disabled') === 'true') event.preventDefault();
  });

  confirm.addEventListener('click', () => void revoke());

  async function revoke(): Promise<void> {
    if (!pending || confirm.getAttribute('aria-disabled') === 'true') return;
    const { key } = pending;
    confirm.setAttribute('aria-disabled', 'true');
    confirm.textContent = 'Revoking…';
    dialog.setAttribute('aria-busy', 'true');
    try {
      const revoked = await settingsApi.revokeKey(key.id);
      const replacement = card({ ...key, ...revoked });
      cardOf(key.id)?.replaceWith(replacement);
      close();
      announce(`Key “${key.name}” revoked. It can no longer get tokens, and its access tokens are refused.`, 'success');
      replacement.querySelector<HTMLElement>('.key-card__name')?.focus();
    } catch (error) {
      if (isUnauthorized(error)) {
        close();
        return ctx.sessionLost();
      }
      if (error instanceof ApiError && error.status === 404) {
        close();
        announce(`Key “${key.name}” no longer exists. The list has been refreshed.`, 'error');
        await load();
        return;
      }
      dialogError.replaceChildren(`The key was not revoked. ${errorMessage(error)}`);
    } finally {
      confirm.removeAttribute('aria-disabled');
      confirm.textContent = 'Revoke key';
      dialog.removeAttribute('aria-busy');
    }
  }

  return { load };
}
