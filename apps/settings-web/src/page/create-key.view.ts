import { AppContext, errorMessage, isUnauthorized } from './app-context.js';
import { byId, h } from './dom.js';
import { clearFormErrors, FieldProblem } from './form-errors.js';
import { submitForm } from './form-submit.js';
import { resourceTitle, scopeDescription } from './format.js';
import { PATHS } from './routes.js';
import { ScopeGroup, settingsApi } from './settings-api.client.js';

/**
 * Settings → API → Create key: a name and one checkbox per scope grouped by resource, then the
 * result view that shows the Client ID and the Secret Key exactly once.
 */
export function setupCreateKeyView(ctx: AppContext): {
  enterCreate(): Promise<void>;
  enterCreated(): void;
  leaveCreated(): void;
} {
  const form = byId<HTMLFormElement>('create-form');
  const groups = byId('scope-groups');
  let scopes: ScopeGroup[] | null = null;

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
    const problems: FieldProblem[] = [];
    if (!name) problems.push({ field: 'name', message: 'Enter a name for the key.' });
    if (chosen.length === 0) problems.push({ field: 'scopes', message: 'Choose at least one scope.' });
    void submitForm(
      form,
      problems,
      'Creating key…',
      async () => {
        ctx.state.createdKey = await settingsApi.createKey({ name, scopes: chosen });
        // Replace, not push: Back from the result must not offer the filled-in form again.
        ctx.navigate(PATHS.created, { replace: true });
      },
      { handled: (error) => isUnauthorized(error) && (ctx.sessionLost(), true) },
    );
  });

  for (const button of document.querySelectorAll<HTMLButtonElement>('[data-copy]')) {
    button.addEventListener('click', () => void copy(button));
  }

  async function copy(button: HTMLButtonElement): Promise<void> {
    const source = byId(button.dataset.copy ?? '');
    const feedback = byId(`${source.id}-copied`);
    const text = source.textContent ?? '';
    try {
      await navigator.clipboard.writeText(text);
      feedback.textContent = 'Copied';
      feedback.dataset.state = 'done';
    } catch {
      // No clipboard access (an old browser, a denied permission): select it for Ctrl+C instead.
      const selection = window.getSelection();
      selection?.selectAllChildren(source);
      feedback.textContent = 'Selected: press Ctrl+C (⌘C on a Mac) to copy';
      feedback.dataset.state = 'manual';
    }
    window.clearTimeout(Number(feedback.dataset.timer ?? 0));
    feedback.dataset.timer = String(window.setTimeout(() => (feedback.textContent = ''), 6000));
  }

  function fillCredentials(values: { name: string; clientId: string; secret: string; scopes: string[] }): void {
    byId('created-name').textContent = values.name;
    byId('created-client-id').textContent = values.clientId;
    byId('created-client-secret').textContent = values.secret;
    byId('created-scopes').replaceChildren(...values.scopes.map((s) => h('li', {}, h('code', {}, s))));
    for (const feedback of document.querySelectorAll('.copy-feedback')) feedback.textContent = '';
  }

  return {
    async enterCreate() {
      form.reset();
      clearFormErrors(form);
      await loadScopes();
    },
    enterCreated() {
      const key = ctx.state.createdKey;
      if (!key) return;
      fillCredentials({ name: key.name, clientId: key.client_id, secret: key.client_secret, scopes: key.scopes });
    },
    leaveCreated() {
      // Once this view is left the secret is gone from memory and from the document for good.
      ctx.state.createdKey = null;
      fillCredentials({ name: '', clientId: '', secret: '', scopes: [] });
      window.getSelection()?.removeAllRanges();
    },
  };
}
