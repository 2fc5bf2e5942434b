import { AppContext, errorMessage, isUnauthorized } from './app-context.js';
import { announce, byId, h } from './dom.js';
import { formatDateTime, statusLabel } from './format.js';
import { ApiError, ApiKey, settingsApi } from './settings-api.client.js';

/** Settings → API: the key list and the revoke confirmation dialog. */
export function setupApiKeysView(ctx: AppContext): { load(): Promise<void> } {
  const list = byId<HTMLUListElement>('keys-list');
  const empty = byId('keys-empty');
  const problem = byId('keys-error');
  const dialog = byId<HTMLDialogElement>('revoke-dialog');
  const confirm = byId<HTMLButtonElement>('revoke-confirm');
  const dialogError = byId('revoke-error');
  let pending: { key: ApiKey; trigger: HTMLButtonElement } | null = null;

  function time(iso: string): HTMLTimeElement {
    return h('time', { datetime: iso }, formatDateTime(iso));
  }

  function row(label: string, ...value: (Node | string)[]): HTMLDivElement {
    return h('div', { class: 'key-card__row' }, h('dt', {}, label), h('dd', {}, ...value));
  }

  function card(key: ApiKey): HTMLLIElement {
    const headingId = `key-${key.id}-name`;
    const revoked = key.status !== 'active';
    const revoke = revoked
      ? null
      : h('button', { type: 'button', class: 'button button--danger-quiet' }, 'Revoke', h('span', { class: 'visually-hidden' }, ` key “${key.name}”`));
    revoke?.addEventListener('click', () => open(key, revoke));
    return h(
      'li',
      { class: `key-card${revoked ? ' key-card--revoked' : ''}`, 'data-key-id': key.id, 'aria-labelledby': headingId },
      h('h3', { class: 'key-card__name', id: headingId, tabindex: '-1' }, key.name),
      h(
        'dl',
        { class: 'key-card__details' },
        row('Client ID', h('code', { class: 'wrap-anywhere' }, key.client_id)),
        row('Scopes', h('ul', { class: 'scope-tags' }, ...key.scopes.map((s) => h('li', {}, h('code', {}, s))))),
        row('Created', time(key.created_at)),
        row('Last used', key.last_used_at ? time(key.last_used_at) : 'Never'),
        row(
          'Status',
          h('span', { class: `badge badge--${revoked ? 'revoked' : 'active'}` }, statusLabel(key.status)),
          ...(key.revoked_at ? [' ', h('span', { class: 'muted' }, 'on ', time(key.revoked_at))] : []),
        ),
      ),
      revoke ? h('div', { class: 'key-card__actions' }, revoke) : null,
    );
  }

  function render(keys: ApiKey[]): void {
    list.replaceChildren(...keys.map(card));
    empty.hidden = keys.length > 0;
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

  dialog.addEventListener('close', () => {
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
      list.querySelector(`[data-key-id="${CSS.escape(key.id)}"]`)?.replaceWith(replacement);
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
