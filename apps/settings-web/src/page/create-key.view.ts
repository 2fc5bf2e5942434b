import { MAX_ALLOWED_IPS, parseAddressLines, withNamedAddresses } from './allowed-ips.js';
import { AppContext, errorMessage, isUnauthorized } from './app-context.js';
import { bindCopyButtons, clearCopyFeedback } from './clipboard.js';
import { byId, h } from './dom.js';
import { dateInputRange, expiresAtFor } from './expiry.js';
import { clearFormErrors, FieldProblem } from './form-errors.js';
import { submitForm } from './form-submit.js';
import { resourceTitle, scopeDescription } from './format.js';
import { addressListValue, expiryValue } from './key-card.js';
import { PATHS } from './routes.js';
import { CreateKeyInput, ScopeGroup, settingsApi } from './settings-api.client.js';

/**
 * Settings → API → Create key: a name, one checkbox per scope grouped by resource, when the key
 * expires and, optionally, the addresses it may be used from; then the result view that shows the
 * Client ID and the Secret Key exactly once.
 */
export function setupCreateKeyView(ctx: AppContext): {
  enterCreate(): Promise<void>;
  enterCreated(): void;
  leaveCreated(): void;
} {
  const form = byId<HTMLFormElement>('create-form');
  const groups = byId('scope-groups');
  const dateField = byId('create-expires-date-field');
  const dateInput = byId<HTMLInputElement>('create-expires-date');
  let scopes: ScopeGroup[] | null = null;

  /**
   * The date input exists only for "On a date": hidden and disabled otherwise, so it is neither a tab
   * stop nor sent. Focus is not moved to it on choosing: arrow keys move through the radios.
   */
  function syncExpiryDate(): void {
    const onDate = expiryChoice() === 'date';
    dateField.hidden = !onDate;
    dateInput.disabled = !onDate;
  }

  function expiryChoice(): string {
    return form.querySelector<HTMLInputElement>('input[name="expires"]:checked')?.value ?? 'never';
  }

  for (const radio of form.querySelectorAll<HTMLInputElement>('input[name="expires"]')) radio.addEventListener('change', syncExpiryDate);

  async function loadScopes(): Promise<void> {
    if (scopes) return;
    groups.replaceChildren(h('p', { class: 'muted' }, 'Loading scopes…'));
    groups.setAttribute('aria-busy', 'true');
    try {
      scopes = (await settingsApi.scopes()).data;
      renderScopes(scopes);
    } catch (error) {
      if (isUnauthorized(error)) return ctx.sessionLost();
      const retry = h('button', { type: 'button', class: 'button' }, 'Try again');
      retry.addEventListener('click', () => void loadScopes().then(() => groups.querySelector('input')?.focus()));
      groups.replaceChildren(h('p', { class: 'inline-error', role: 'alert' }, `The scopes could not be loaded. ${errorMessage(error)}`), retry);
    } finally {
      groups.removeAttribute('aria-busy');
    }
  }

  function renderScopes(list: ScopeGroup[]): void {
    groups.replaceChildren(
      ...list.map((group) =>
        h(
          'fieldset',
          { class: 'scope-group' },
          h('legend', {}, resourceTitle(group.resource)),
          ...group.scopes.map((scope) => {
            const id = `scope-${scope.replace(/[^a-z0-9]+/gi, '-')}`;
            return h(
              'div',
              { class: 'check' },
              h('input', { type: 'checkbox', id, name: 'scopes', value: scope, 'aria-describedby': `${id}-hint` }),
              h('label', { for: id }, h('code', {}, scope)),
              h('span', { class: 'hint', id: `${id}-hint` }, scopeDescription(scope)),
            );
          }),
        ),
      ),
    );
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = (form.elements.namedItem('name') as HTMLInputElement).value.trim();
    const chosen = [...form.querySelectorAll<HTMLInputElement>('input[name="scopes"]:checked')].map((c) => c.value);
    const expiry = expiresAtFor(expiryChoice(), dateInput.value);
    const addresses = parseAddressLines((form.elements.namedItem('allowed_ips') as HTMLTextAreaElement).value);
    const problems: FieldProblem[] = [];
    if (!name) problems.push({ field: 'name', message: 'Enter a name for the key.' });
    if (chosen.length === 0) problems.push({ field: 'scopes', message: 'Choose at least one scope.' });
    if (!expiry.ok) problems.push({ field: 'expires_at', message: expiry.message });
    if (addresses.length > MAX_ALLOWED_IPS) problems.push({ field: 'allowed_ips', message: `Enter at most ${MAX_ALLOWED_IPS} addresses.` });
    const input: CreateKeyInput = { name, scopes: chosen };
    // Defaults are left out rather than sent as null and []: the request says only what was chosen.
    if (expiry.ok && expiry.expiresAt !== null) input.expires_at = expiry.expiresAt;
    if (addresses.length > 0) input.allowed_ips = addresses.map((a) => a.value);
    void submitForm(
      form,
      problems,
      'Creating key…',
      async () => {
        try {
          ctx.state.createdKey = await settingsApi.createKey(input);
        } catch (error) {
          throw withNamedAddresses(error, addresses);
        }
        // Replace, not push: Back from the result must not offer the filled-in form again.
        ctx.navigate(PATHS.created, { replace: true });
      },
      { handled: (error) => isUnauthorized(error) && (ctx.sessionLost(), true) },
    );
  });

  const created = byId('panel-created');
  bindCopyButtons(created);

  function fillCredentials(
    values: { name: string; clientId: string; secret: string; scopes: string[]; expiresAt: string | null; allowedIps: string[] } | null,
  ): void {
    byId('created-name').textContent = values?.name ?? '';
    byId('created-client-id').textContent = values?.clientId ?? '';
    byId('created-client-secret').textContent = values?.secret ?? '';
    byId('created-scopes').replaceChildren(...(values?.scopes ?? []).map((s) => h('li', {}, h('code', {}, s))));
    byId('created-expires').replaceChildren(values ? expiryValue(values.expiresAt) : '');
    byId('created-allowed-ips').replaceChildren(values ? addressListValue(values.allowedIps) : '');
    clearCopyFeedback(created);
  }

  return {
    async enterCreate() {
      form.reset();
      clearFormErrors(form);
      syncExpiryDate();
      // Today's range, set on every visit: a tab left open overnight still offers the right days.
      const range = dateInputRange();
      dateInput.min = range.min;
      dateInput.max = range.max;
      await loadScopes();
    },
    enterCreated() {
      const key = ctx.state.createdKey;
      if (!key) return;
      fillCredentials({
        name: key.name,
        clientId: key.client_id,
        secret: key.client_secret,
        scopes: key.scopes,
        expiresAt: key.expires_at,
        allowedIps: key.allowed_ips,
      });
    },
    leaveCreated() {
      // Once this view is left the secret is gone from memory and from the document for good.
      ctx.state.createdKey = null;
      fillCredentials(null);
      window.getSelection()?.removeAllRanges();
    },
  };
}
