import { setupAllowedIpsDialog } from './allowed-ips.dialog.js';
import { AppContext, errorMessage, isUnauthorized } from './app-context.js';
import { announce, byId, h, onDialogClosed } from './dom.js';
import { plural } from './format.js';
import { KeyAction, keyCard } from './key-card.js';
import { KeyListHooks } from './key-dialogs.js';
import { allPages, INACTIVE_PAGE_SIZE, INACTIVE_STATUSES, LIVE_PAGE_SIZE } from './key-pages.js';
import { setupRollSecretDialog } from './roll-secret.dialog.js';
import { ApiError, ApiKey, settingsApi } from './settings-api.client.js';

/**
 * Settings → API: the key list, the revoke confirmation dialog, and the roll and allowed-IP dialogs.
 * Every live key is shown, page after page of the API's list; revoked and expired keys, which pile
 * up without limit, only on request and a page at a time, below them: however many there are, they
 * never push a live key out of sight.
 */
export function setupApiKeysView(ctx: AppContext): { load(): Promise<void> } {
  const list = byId<HTMLUListElement>('keys-list');
  const empty = byId('keys-empty');
  const problem = byId('keys-error');
  const inactiveToggle = byId<HTMLButtonElement>('keys-inactive-toggle');
  const inactive = byId('keys-inactive');
  const inactiveTitle = byId('keys-inactive-title');
  const inactiveList = byId<HTMLUListElement>('keys-inactive-list');
  const inactiveEmpty = byId('keys-inactive-empty');
  const inactiveCount = byId('keys-inactive-count');
  const inactiveError = byId('keys-inactive-error');
  const inactiveMore = byId<HTMLButtonElement>('keys-inactive-more');
  /** The last revoked or expired key shown, for "Show more"; null before the first page. */
  let inactiveAfter: string | null = null;
  /** Bumped by every load of the revoked and expired keys: an answer to an earlier one is dropped. */
  let inactiveGeneration = 0;
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
    const shown = inactiveToggle.getAttribute('aria-expanded') === 'true' ? loadInactive(true) : null;
    try {
      render(await allPages((after) => settingsApi.listKeys({ status: ['active'], limit: LIVE_PAGE_SIZE, startingAfter: after })));
    } catch (error) {
      if (isUnauthorized(error)) return ctx.sessionLost();
      const retry = h('button', { type: 'button', class: 'button' }, 'Try again');
      retry.addEventListener('click', () => void load());
      problem.replaceChildren(h('p', {}, `The keys could not be loaded. ${errorMessage(error)}`), retry);
    } finally {
      list.removeAttribute('aria-busy');
    }
    await shown;
  }

  /** The first page of revoked and expired keys (`fresh`), or the next one ("Show more"). */
  async function loadInactive(fresh: boolean): Promise<void> {
    const current = fresh ? (inactiveGeneration += 1) : inactiveGeneration;
    if (fresh) inactiveAfter = null;
    inactiveError.replaceChildren();
    inactiveMore.setAttribute('aria-disabled', 'true');
    inactiveList.setAttribute('aria-busy', 'true');
    try {
      const page = await settingsApi.listKeys({ status: INACTIVE_STATUSES, limit: INACTIVE_PAGE_SIZE, startingAfter: inactiveAfter });
      if (current !== inactiveGeneration) return;
      if (fresh) inactiveList.replaceChildren();
      const known = new Set([...inactiveList.querySelectorAll<HTMLElement>('[data-key-id]')].map((el) => el.dataset.keyId));
      const added = page.data.filter((key) => !known.has(key.id)).map(card);
      inactiveList.append(...added);
      if (page.data.length > 0) inactiveAfter = page.data[page.data.length - 1].id;
      const total = inactiveList.childElementCount;
      inactiveEmpty.hidden = total > 0;
      inactiveMore.hidden = !(page.has_more && page.data.length > 0);
      inactiveCount.textContent = total === 0 ? '' : `${plural(total, 'revoked or expired key')} shown${inactiveMore.hidden ? '' : '; more are available'}.`;
      // After "Show more", on to the first key it brought.
      if (!fresh) (added[0]?.querySelector<HTMLElement>('.key-card__name') ?? inactiveTitle).focus();
    } catch (error) {
      if (current !== inactiveGeneration) return;
      if (isUnauthorized(error)) return ctx.sessionLost();
      inactiveError.replaceChildren(`The revoked and expired keys could not be loaded. ${errorMessage(error)}`);
    } finally {
      if (current === inactiveGeneration) {
        inactiveList.removeAttribute('aria-busy');
        inactiveMore.removeAttribute('aria-disabled');
      }
    }
  }

  inactiveToggle.addEventListener('click', () => {
    const show = inactiveToggle.getAttribute('aria-expanded') !== 'true';
    inactiveToggle.setAttribute('aria-expanded', String(show));
    inactiveToggle.textContent = show ? 'Hide revoked and expired keys' : 'Show revoked and expired keys';
    inactive.hidden = !show;
    if (show) void loadInactive(true);
    else inactiveGeneration += 1;
  });
  inactiveMore.addEventListener('click', () => {
    if (inactiveMore.getAttribute('aria-disabled') !== 'true') void loadInactive(false);
  });

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
