import { AppContext, errorMessage, isUnauthorized } from './app-context.js';
import { bindCopyButtons, clearCopyFeedback } from './clipboard.js';
import { announce, byId, h, onDialogClosed } from './dom.js';
import { timeElement } from './key-card.js';
import { allPages } from './key-pages.js';
import { PATHS } from './routes.js';
import { ApiError, settingsApi } from './settings-api.client.js';
import { attemptsPath, endpointStatus, isAllEvents, schemeLabel, StatusPart, WebhookEndpoint } from './webhooks.js';

type EndpointAction = 'test' | 'roll' | 'toggle' | 'delete';

/** What a person calls an endpoint: its description when it has one, else its URL. */
const nameOf = (endpoint: WebhookEndpoint): string => endpoint.description?.trim() || endpoint.url;

export function statusParts(parts: readonly StatusPart[]): (Node | string)[] {
  return parts.map((part) => (typeof part === 'string' ? part : timeElement(part.time)));
}

/** The status row's content: the badge, then why ("Disabled: failing since …"). */
export function statusValue(endpoint: WebhookEndpoint): (Node | string)[] {
  const status = endpointStatus(endpoint);
  return [
    h('span', { class: `badge badge--${status.tone}` }, status.badge),
    ...(status.note.length > 0 ? [h('span', { class: 'endpoint-card__note' }, ': ', ...statusParts(status.note))] : []),
  ];
}

/**
 * Settings → Webhooks: the organization's endpoints (16 at most), each with its URL, events, status
 * (and why it is disabled or since when it fails), and its actions: delivery attempts, a test event,
 * rolling the signing secret (dialog: the new secret shown once), disabling or enabling it, deleting
 * it (confirmed). Every call goes through the auth service (ADR 0038).
 */
export function setupWebhooksView(ctx: AppContext): { load(): Promise<void> } {
  const list = byId<HTMLUListElement>('endpoints-list');
  const empty = byId('endpoints-empty');
  const problem = byId('endpoints-error');
  const listTitle = byId('endpoints-title');

  const cardOf = (id: string): HTMLElement | null => list.querySelector<HTMLElement>(`[data-endpoint-id="${CSS.escape(id)}"]`);

  function focusAction(id: string, action: string): void {
    const again = cardOf(id);
    (again?.querySelector<HTMLElement>(`[data-action="${CSS.escape(action)}"]`) ?? again?.querySelector<HTMLElement>('.key-card__name') ?? listTitle).focus();
  }

  function row(label: string, ...value: (Node | string | null)[]): HTMLDivElement {
    return h('div', { class: 'key-card__row' }, h('dt', {}, label), h('dd', {}, ...value));
  }

  function card(endpoint: WebhookEndpoint): HTMLLIElement {
    const headingId = `endpoint-${endpoint.id}-name`;
    const enabled = endpoint.status === 'enabled';
    const name = nameOf(endpoint);
    const button = (action: EndpointAction, text: string, className = 'button'): HTMLButtonElement => {
      const b = h('button', { type: 'button', class: className, 'data-action': action }, text, h('span', { class: 'visually-hidden' }, ` of endpoint “${name}”`));
      b.addEventListener('click', () => void act(action, endpoint, b));
      return b;
    };
    return h(
      'li',
      { class: `key-card endpoint-card${enabled ? '' : ' key-card--inactive'}`, 'data-endpoint-id': endpoint.id, 'aria-labelledby': headingId },
      h('h3', { class: 'key-card__name wrap-anywhere', id: headingId, tabindex: '-1' }, endpoint.url),
      endpoint.description ? h('p', { class: 'muted endpoint-card__description' }, endpoint.description) : null,
      h(
        'dl',
        { class: 'key-card__details' },
        row('Events', isAllEvents(endpoint.enabled_events) ? 'All events' : h('ul', { class: 'scope-tags' }, ...endpoint.enabled_events.map((t) => h('li', {}, h('code', {}, t))))),
        row('Signature', schemeLabel(endpoint.signature_scheme)),
        row('Created', timeElement(endpoint.created_at)),
        row('Status', ...statusValue(endpoint)),
      ),
      h(
        'div',
        { class: 'key-card__actions' },
        h('a', { class: 'button', href: attemptsPath(PATHS['webhook-attempts'], endpoint.id), 'data-link': true, 'data-action': 'attempts' }, 'Delivery attempts', h('span', { class: 'visually-hidden' }, ` of endpoint “${name}”`)),
        button('test', 'Send test event'),
        button('roll', 'Roll secret'),
        button('toggle', enabled ? 'Disable' : 'Enable'),
        button('delete', 'Delete', 'button button--danger-quiet'),
      ),
    );
  }

  function render(endpoints: WebhookEndpoint[]): void {
    const focused = list.contains(document.activeElement) ? (document.activeElement as HTMLElement) : null;
    const id = focused?.closest<HTMLElement>('[data-endpoint-id]')?.dataset.endpointId;
    const action = focused?.dataset.action;
    list.replaceChildren(...endpoints.map(card));
    empty.hidden = endpoints.length > 0;
    if (id) focusAction(id, action ?? '');
  }

  async function load(): Promise<void> {
    problem.replaceChildren();
    list.setAttribute('aria-busy', 'true');
    if (list.childElementCount === 0) empty.hidden = true;
    try {
      render(await allPages((after) => settingsApi.listWebhookEndpoints(after)));
    } catch (error) {
      if (isUnauthorized(error)) return ctx.sessionLost();
      const retry = h('button', { type: 'button', class: 'button' }, 'Try again');
      retry.addEventListener('click', () => void load());
      problem.replaceChildren(h('p', {}, `The webhook endpoints could not be loaded. ${errorMessage(error)}`), retry);
    } finally {
      list.removeAttribute('aria-busy');
    }
  }

  /** A failure of an action on a card: a lost session, an endpoint gone (the list reloads), or what the server said. */
  async function failed(endpoint: WebhookEndpoint, what: string, error: unknown): Promise<void> {
    if (isUnauthorized(error)) return ctx.sessionLost();
    if (error instanceof ApiError && error.status === 404) {
      announce(`Endpoint “${nameOf(endpoint)}” no longer exists. The list has been refreshed.`, 'error');
      await load();
      return;
    }
    announce(`${what} ${errorMessage(error)}`, 'error');
  }

  async function busy(trigger: HTMLButtonElement, work: () => Promise<void>): Promise<void> {
    if (trigger.getAttribute('aria-disabled') === 'true') return;
    trigger.setAttribute('aria-disabled', 'true');
    try {
      await work();
    } finally {
      trigger.removeAttribute('aria-disabled');
    }
  }

  async function act(action: EndpointAction, endpoint: WebhookEndpoint, trigger: HTMLButtonElement): Promise<void> {
    if (action === 'roll') return roll.open(endpoint, trigger);
    if (action === 'delete') return remove.open(endpoint, trigger);
    if (action === 'test') {
      return busy(trigger, async () => {
        try {
          await settingsApi.sendWebhookTest(endpoint.id);
          announce(`Test event sent to “${nameOf(endpoint)}”. Its delivery shows under Delivery attempts in a moment.`, 'success');
        } catch (error) {
          await failed(endpoint, 'The test event was not sent.', error);
        }
      });
    }
    const status = endpoint.status === 'enabled' ? 'disabled' : 'enabled';
    return busy(trigger, async () => {
      try {
        const updated = await settingsApi.updateWebhookEndpoint(endpoint.id, { status });
        cardOf(endpoint.id)?.replaceWith(card(updated));
        announce(
          status === 'disabled'
            ? `Endpoint “${nameOf(endpoint)}” disabled. Nothing is sent to it until it is enabled again.`
            : `Endpoint “${nameOf(endpoint)}” enabled. Deliveries to it resume.`,
          'success',
        );
        focusAction(endpoint.id, 'toggle');
      } catch (error) {
        await failed(endpoint, `The endpoint was not ${status}.`, error);
      }
    });
  }

  const roll = setupRollDialog({ replace: (e) => cardOf(e.id)?.replaceWith(card(e)), focus: focusAction, failed });
  const remove = setupDeleteDialog({
    removed(endpoint) {
      cardOf(endpoint.id)?.remove();
      empty.hidden = list.childElementCount > 0;
      announce(`Endpoint “${nameOf(endpoint)}” deleted. Nothing more is sent to it.`, 'success');
      listTitle.focus();
    },
    focus: focusAction,
    failed,
  });

  return { load };
}

interface DialogHooks {
  focus(id: string, action: string): void;
  failed(endpoint: WebhookEndpoint, what: string, error: unknown): Promise<void>;
}

/**
 * Roll the signing secret, in two steps like a key's: what happens (the current secret keeps signing
 * beside the new one for 24 hours), then the new secret, once, with a copy button. Closing the dialog
 * removes it from the document.
 */
function setupRollDialog(hooks: DialogHooks & { replace(endpoint: WebhookEndpoint): void }) {
  const dialog = byId<HTMLDialogElement>('webhook-roll-dialog');
  const choose = byId('webhook-roll-choose');
  const result = byId('webhook-roll-result');
  const confirm = byId<HTMLButtonElement>('webhook-roll-confirm');
  const error = byId('webhook-roll-error');
  const secret = byId('webhook-rolled-secret');
  let pending: { endpoint: WebhookEndpoint; trigger: HTMLButtonElement } | null = null;
  bindCopyButtons(result);

  function step(which: 'choose' | 'result'): void {
    choose.hidden = which !== 'choose';
    result.hidden = which !== 'result';
    dialog.setAttribute('aria-labelledby', which === 'choose' ? 'webhook-roll-title' : 'webhook-rolled-title');
    dialog.setAttribute('aria-describedby', which === 'choose' ? 'webhook-roll-description' : 'webhook-rolled-warning');
  }

  onDialogClosed(dialog, () => {
    secret.textContent = '';
    clearCopyFeedback(result);
    window.getSelection()?.removeAllRanges();
    if (pending) hooks.focus(pending.endpoint.id, 'roll');
    pending = null;
  });
  dialog.addEventListener('cancel', (event) => {
    if (confirm.getAttribute('aria-disabled') === 'true') event.preventDefault();
  });
  byId('webhook-roll-cancel').addEventListener('click', () => {
    if (confirm.getAttribute('aria-disabled') !== 'true') dialog.close();
  });
  byId('webhook-roll-done').addEventListener('click', () => dialog.close());

  confirm.addEventListener('click', () => void (async () => {
    if (!pending || confirm.getAttribute('aria-disabled') === 'true') return;
    const { endpoint } = pending;
    confirm.setAttribute('aria-disabled', 'true');
    confirm.textContent = 'Rolling…';
    error.replaceChildren();
    try {
      const rolled = await settingsApi.rollWebhookSecret(endpoint.id);
      const { secret: shown, ...withoutSecret } = rolled;
      hooks.replace(withoutSecret);
      byId('webhook-rolled-name').textContent = nameOf(endpoint);
      byId('webhook-rolled-label').textContent = rolled.signature_scheme === 'v1a' ? 'Public key' : 'Signing secret';
      secret.textContent = shown;
      step('result');
      byId('webhook-rolled-title').focus();
    } catch (failure) {
      if (isUnauthorized(failure) || (failure instanceof ApiError && failure.status === 404)) {
        dialog.close();
        await hooks.failed(endpoint, '', failure);
        return;
      }
      error.replaceChildren(`The secret was not rolled. ${errorMessage(failure)}`);
    } finally {
      confirm.removeAttribute('aria-disabled');
      confirm.textContent = 'Roll secret';
    }
  })());

  return {
    open(endpoint: WebhookEndpoint, trigger: HTMLButtonElement): void {
      pending = { endpoint, trigger };
      byId('webhook-roll-name').textContent = nameOf(endpoint);
      error.replaceChildren();
      step('choose');
      dialog.showModal();
      byId('webhook-roll-cancel').focus();
    },
  };
}

/** Delete, confirmed: the safe choice has focus. */
function setupDeleteDialog(hooks: DialogHooks & { removed(endpoint: WebhookEndpoint): void }) {
  const dialog = byId<HTMLDialogElement>('webhook-delete-dialog');
  const confirm = byId<HTMLButtonElement>('webhook-delete-confirm');
  const error = byId('webhook-delete-error');
  let pending: { endpoint: WebhookEndpoint; trigger: HTMLButtonElement } | null = null;
  let deleted = false;

  onDialogClosed(dialog, () => {
    if (pending && !deleted) hooks.focus(pending.endpoint.id, 'delete');
    pending = null;
  });
  dialog.addEventListener('cancel', (event) => {
    if (confirm.getAttribute('aria-disabled') === 'true') event.preventDefault();
  });
  byId('webhook-delete-cancel').addEventListener('click', () => {
    if (confirm.getAttribute('aria-disabled') !== 'true') dialog.close();
  });
  confirm.addEventListener('click', () => void (async () => {
    if (!pending || confirm.getAttribute('aria-disabled') === 'true') return;
    const { endpoint } = pending;
    confirm.setAttribute('aria-disabled', 'true');
    confirm.textContent = 'Deleting…';
    error.replaceChildren();
    try {
      await settingsApi.deleteWebhookEndpoint(endpoint.id);
      deleted = true;
      dialog.close();
      hooks.removed(endpoint);
    } catch (failure) {
      if (isUnauthorized(failure) || (failure instanceof ApiError && failure.status === 404)) {
        dialog.close();
        await hooks.failed(endpoint, '', failure);
        return;
      }
      error.replaceChildren(`The endpoint was not deleted. ${errorMessage(failure)}`);
    } finally {
      confirm.removeAttribute('aria-disabled');
      confirm.textContent = 'Delete endpoint';
    }
  })());

  return {
    open(endpoint: WebhookEndpoint, trigger: HTMLButtonElement): void {
      pending = { endpoint, trigger };
      deleted = false;
      byId('webhook-delete-name').textContent = nameOf(endpoint);
      byId('webhook-delete-url').textContent = endpoint.url;
      error.replaceChildren();
      dialog.showModal();
      byId('webhook-delete-cancel').focus();
    },
  };
}
