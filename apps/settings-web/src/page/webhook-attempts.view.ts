import { AppContext, errorMessage, isUnauthorized } from './app-context.js';
import { announce, byId, h } from './dom.js';
import { clearFormErrors, FieldProblem } from './form-errors.js';
import { submitForm } from './form-submit.js';
import { timeElement } from './key-card.js';
import { ApiError, settingsApi } from './settings-api.client.js';
import { statusValue } from './webhooks.view.js';
import { defaultReplaySince, endpointIdFromSearch, latencyLabel, outcomeLabel, replaySince, responseLabel, WebhookAttempt, WebhookEndpoint } from './webhooks.js';

/**
 * Settings → Webhooks → Delivery attempts of one endpoint (`/settings/webhooks/attempts?endpoint=wep_…`):
 * the endpoint and its status, its attempts newest first (time, event, attempt number, outcome,
 * response, latency), 25 at a time with "Load more attempts", "Refresh", "Send test event", and the
 * replay of every failed delivery since a time the person picks (a day back by default).
 */
export function setupWebhookAttemptsView(ctx: AppContext): { load(): Promise<void> } {
  const summary = byId('webhook-attempts-endpoint');
  const problem = byId('webhook-attempts-error');
  const tools = byId('webhook-attempts-tools');
  const table = byId<HTMLTableElement>('attempts-table');
  const rows = byId<HTMLTableSectionElement>('attempts-rows');
  const empty = byId('attempts-empty');
  const count = byId('attempts-count');
  const more = byId<HTMLButtonElement>('attempts-more');
  const moreError = byId('attempts-more-error');
  const refresh = byId<HTMLButtonElement>('attempts-refresh');
  const test = byId<HTMLButtonElement>('attempts-test');
  const replayForm = byId<HTMLFormElement>('webhook-replay-form');
  const sinceInput = byId<HTMLInputElement>('webhook-replay-since');
  const attemptsTitle = byId('attempts-title');

  let endpoint: WebhookEndpoint | null = null;
  let lastId: string | null = null;
  let hasMore = false;
  const shown = new Set<string>();
  /** Bumped by every load: an answer to an earlier one (another endpoint since) is dropped. */
  let generation = 0;

  function row(attempt: WebhookAttempt): HTMLTableRowElement {
    const cell = (label: string, ...content: (Node | string)[]) => h('td', { role: 'cell', 'data-label': label }, ...content);
    const ok = attempt.outcome === 'succeeded';
    return h(
      'tr',
      { role: 'row', 'data-attempt-id': attempt.id, 'data-outcome': attempt.outcome },
      h('th', { role: 'rowheader', scope: 'row', 'data-label': 'Time', tabindex: '-1' }, timeElement(attempt.created_at)),
      cell('Event', h('code', { class: 'wrap-anywhere' }, attempt.event)),
      cell('Attempt', String(attempt.attempt)),
      cell('Outcome', h('span', { class: `badge badge--${ok ? 'active' : 'inactive'}` }, outcomeLabel(attempt.outcome))),
      cell('Response', responseLabel(attempt)),
      cell('Latency', latencyLabel(attempt.latency_ms)),
    );
  }

  function append(attempts: readonly WebhookAttempt[], hasNext: boolean): HTMLTableRowElement | null {
    const fresh = attempts.filter((a) => !shown.has(a.id));
    for (const a of fresh) shown.add(a.id);
    const added = fresh.map(row);
    rows.append(...added);
    if (attempts.length > 0) lastId = attempts[attempts.length - 1].id;
    hasMore = hasNext && lastId !== null;
    table.hidden = shown.size === 0;
    empty.hidden = shown.size > 0;
    more.hidden = !hasMore;
    count.textContent = shown.size === 0 ? '' : `${shown.size} ${shown.size === 1 ? 'attempt' : 'attempts'} shown${hasMore ? '; more are available' : ''}.`;
    return added[0] ?? null;
  }

  function reset(): void {
    rows.replaceChildren();
    shown.clear();
    lastId = null;
    hasMore = false;
  }

  function showEndpoint(e: WebhookEndpoint | null): void {
    endpoint = e;
    summary.replaceChildren(...(e ? [h('code', { class: 'wrap-anywhere' }, e.url), ' ', ...statusValue(e)] : []));
    tools.hidden = e === null;
  }

  /** The endpoint and the first page of its attempts (again, for "Refresh"). */
  async function load(): Promise<void> {
    const current = (generation += 1);
    const id = endpointIdFromSearch(location.search);
    problem.replaceChildren();
    moreError.replaceChildren();
    clearFormErrors(replayForm);
    if (endpoint?.id !== id) {
      showEndpoint(null);
      reset();
      table.hidden = true;
      empty.hidden = true;
      count.textContent = '';
      sinceInput.value = defaultReplaySince();
    }
    if (id === null) {
      problem.replaceChildren(h('p', {}, 'No webhook endpoint is chosen. Pick one in the list of endpoints.'));
      return;
    }
    table.setAttribute('aria-busy', 'true');
    try {
      const [found, page] = await Promise.all([settingsApi.getWebhookEndpoint(id), settingsApi.webhookAttempts(id)]);
      if (current !== generation) return;
      showEndpoint(found);
      reset();
      append(page.data, page.has_more);
    } catch (error) {
      if (current !== generation) return;
      if (isUnauthorized(error)) return ctx.sessionLost();
      if (error instanceof ApiError && error.status === 404) {
        showEndpoint(null);
        reset();
        table.hidden = true;
        empty.hidden = true;
        problem.replaceChildren(h('p', {}, 'This webhook endpoint does not exist (any more). Pick one in the list of endpoints.'));
        return;
      }
      const retry = h('button', { type: 'button', class: 'button' }, 'Try again');
      retry.addEventListener('click', () => void load());
      problem.replaceChildren(h('p', {}, `The delivery attempts could not be loaded. ${errorMessage(error)}`), retry);
    } finally {
      if (current === generation) table.removeAttribute('aria-busy');
    }
  }

  async function loadMore(): Promise<void> {
    if (!endpoint || more.getAttribute('aria-disabled') === 'true' || !hasMore || lastId === null) return;
    const current = generation;
    more.setAttribute('aria-disabled', 'true');
    more.textContent = 'Loading…';
    moreError.replaceChildren();
    try {
      const page = await settingsApi.webhookAttempts(endpoint.id, lastId);
      if (current !== generation) return;
      const first = append(page.data, page.has_more);
      if (first) first.querySelector<HTMLElement>('th')?.focus();
      else if (more.hidden) attemptsTitle.focus();
    } catch (error) {
      if (current !== generation) return;
      if (isUnauthorized(error)) return ctx.sessionLost();
      moreError.replaceChildren(`More attempts could not be loaded. ${errorMessage(error)}`);
    } finally {
      more.removeAttribute('aria-disabled');
      more.textContent = 'Load more attempts';
    }
  }

  more.addEventListener('click', () => void loadMore());

  refresh.addEventListener('click', () => {
    if (refresh.getAttribute('aria-disabled') === 'true') return;
    refresh.setAttribute('aria-disabled', 'true');
    void load().finally(() => refresh.removeAttribute('aria-disabled'));
  });

  test.addEventListener('click', () => void (async () => {
    if (!endpoint || test.getAttribute('aria-disabled') === 'true') return;
    test.setAttribute('aria-disabled', 'true');
    try {
      await settingsApi.sendWebhookTest(endpoint.id);
      announce('Test event sent. Refresh to see its delivery attempt.', 'success');
    } catch (error) {
      if (isUnauthorized(error)) return ctx.sessionLost();
      announce(`The test event was not sent. ${errorMessage(error)}`, 'error');
    } finally {
      test.removeAttribute('aria-disabled');
    }
  })());

  replayForm.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!endpoint) return;
    const { id } = endpoint;
    const since = replaySince(sinceInput.value);
    const problems: FieldProblem[] = since.ok ? [] : [{ field: 'since', message: since.message }];
    void submitForm(
      replayForm,
      problems,
      'Replaying…',
      async () => {
        if (!since.ok) return;
        const { deliveries_queued: queued } = await settingsApi.replayWebhookDeliveries(id, since.since);
        announce(
          queued === 0
            ? 'No failed deliveries since then: nothing to replay.'
            : `${queued} failed ${queued === 1 ? 'delivery' : 'deliveries'} queued to be sent again. Refresh to see the new attempts.`,
          'success',
        );
      },
      { handled: (error) => isUnauthorized(error) && (ctx.sessionLost(), true) },
    );
  });

  return { load };
}
