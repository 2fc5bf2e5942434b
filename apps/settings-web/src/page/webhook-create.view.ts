import { AppContext, errorMessage, isUnauthorized } from './app-context.js';
import { bindCopyButtons, clearCopyFeedback } from './clipboard.js';
import { byId, h } from './dom.js';
import { clearFormErrors, FieldProblem } from './form-errors.js';
import { submitForm } from './form-submit.js';
import { PATHS } from './routes.js';
import { CreateWebhookEndpointInput, settingsApi } from './settings-api.client.js';
import { eventsSummary, schemeLabel, WebhookEventType } from './webhooks.js';

/**
 * Settings → Webhooks → Add endpoint: the URL, a description, the events (all, or chosen from a
 * checklist of the types the platform sends) and the signature scheme; then the result view, which
 * shows the signing secret exactly once with a copy button, as Create key shows a Secret Key.
 */
export function setupWebhookCreateView(ctx: AppContext): {
  enterCreate(): Promise<void>;
  enterCreated(): void;
  leaveCreated(): void;
} {
  const form = byId<HTMLFormElement>('webhook-create-form');
  const list = byId('webhook-event-list');
  const listField = byId('webhook-event-list-field');
  let types: WebhookEventType[] | null = null;

  function eventsChoice(): string {
    return form.querySelector<HTMLInputElement>('input[name="events"]:checked')?.value ?? 'some';
  }

  /** The checklist is there for "Selected events" only: hidden (and so neither a tab stop nor sent) for "All events". */
  function syncEvents(): void {
    listField.hidden = eventsChoice() === 'all';
  }
  for (const radio of form.querySelectorAll<HTMLInputElement>('input[name="events"]')) radio.addEventListener('change', syncEvents);

  async function loadTypes(): Promise<void> {
    if (types) return;
    list.replaceChildren(h('p', { class: 'muted' }, 'Loading event types…'));
    list.setAttribute('aria-busy', 'true');
    try {
      types = (await settingsApi.webhookEventTypes()).data;
      list.replaceChildren(
        ...types.map((t) => {
          const id = `webhook-event-${t.type.replace(/[^a-z0-9]+/gi, '-')}`;
          return h(
            'div',
            { class: 'check' },
            h('input', { type: 'checkbox', id, name: 'enabled_events', value: t.type, 'aria-describedby': `${id}-hint` }),
            h('label', { for: id }, h('code', {}, t.type)),
            h('span', { class: 'hint', id: `${id}-hint` }, t.description),
          );
        }),
      );
    } catch (error) {
      if (isUnauthorized(error)) return ctx.sessionLost();
      const retry = h('button', { type: 'button', class: 'button' }, 'Try again');
      retry.addEventListener('click', () => void loadTypes().then(() => list.querySelector('input')?.focus()));
      list.replaceChildren(h('p', { class: 'inline-error', role: 'alert' }, `The event types could not be loaded. ${errorMessage(error)}`), retry);
    } finally {
      list.removeAttribute('aria-busy');
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const url = (form.elements.namedItem('url') as HTMLInputElement).value.trim();
    const description = (form.elements.namedItem('description') as HTMLInputElement).value.trim();
    const all = eventsChoice() === 'all';
    const chosen = [...form.querySelectorAll<HTMLInputElement>('input[name="enabled_events"]:checked')].map((c) => c.value);
    const scheme = form.querySelector<HTMLInputElement>('input[name="signature_scheme"]:checked')?.value === 'v1a' ? 'v1a' : 'v1';
    const problems: FieldProblem[] = [];
    if (!url) problems.push({ field: 'url', message: 'Enter the URL to send events to.' });
    if (!all && chosen.length === 0) problems.push({ field: 'enabled_events', message: 'Choose at least one event type, or All events.' });
    const input: CreateWebhookEndpointInput = { url, enabled_events: all ? ['*'] : chosen, signature_scheme: scheme };
    if (description) input.description = description;
    void submitForm(
      form,
      problems,
      'Adding endpoint…',
      async () => {
        ctx.state.createdWebhook = await settingsApi.createWebhookEndpoint(input);
        // Replace, not push: Back from the result must not offer the filled-in form again.
        ctx.navigate(PATHS['webhook-created'], { replace: true });
      },
      { handled: (error) => isUnauthorized(error) && (ctx.sessionLost(), true) },
    );
  });

  const created = byId('panel-webhook-created');
  bindCopyButtons(created);

  function fill(values: { url: string; secret: string; scheme: string; events: string[] } | null): void {
    const publicKey = values?.scheme === 'v1a';
    byId('webhook-created-url').textContent = values?.url ?? '';
    byId('webhook-created-secret').textContent = values?.secret ?? '';
    byId('webhook-created-secret-label').textContent = publicKey ? 'Public key' : 'Signing secret';
    byId('webhook-created-events').textContent = values ? eventsSummary(values.events) : '';
    byId('webhook-created-scheme').textContent = values ? schemeLabel(values.scheme) : '';
    byId('webhook-created-warning-text').textContent = publicKey
      ? 'Copy the public key to your receiver: it verifies the signatures of our deliveries (the private key never leaves the platform). It is also shown in the endpoint’s details.'
      : 'Copy the signing secret now: it will not be shown again. Your receiver verifies each delivery with it. If it is lost, roll the secret.';
    clearCopyFeedback(created);
  }

  return {
    async enterCreate() {
      form.reset();
      clearFormErrors(form);
      syncEvents();
      await loadTypes();
    },
    enterCreated() {
      const endpoint = ctx.state.createdWebhook;
      if (!endpoint) return;
      fill({ url: endpoint.url, secret: endpoint.secret, scheme: endpoint.signature_scheme, events: endpoint.enabled_events });
    },
    leaveCreated() {
      // Once this view is left the secret is gone from memory and from the document for good.
      ctx.state.createdWebhook = null;
      fill(null);
      window.getSelection()?.removeAllRanges();
    },
  };
}
