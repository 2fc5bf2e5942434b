import { AppContext, errorMessage, isUnauthorized } from './app-context.js';
import {
  AUDIT_EVENT_TYPES,
  AuditEvent,
  AuditFilters,
  actorLabel,
  eventSummary,
  filtersFromSearch,
  filtersSearch,
  keyOptionLabel,
  SummaryPart,
  typeOptionLabel,
} from './audit-events.js';
import { byId, h } from './dom.js';
import { clearFormErrors, setFormError, showFieldErrors } from './form-errors.js';
import { plural } from './format.js';
import { allPages, INACTIVE_STATUSES, LIVE_PAGE_SIZE } from './key-pages.js';
import { externalUrl, timeElement } from './key-card.js';
import { PATHS } from './routes.js';
import { ApiError, settingsApi } from './settings-api.client.js';

/**
 * Settings → Audit log: the organization's records, newest first, 50 at a time with "Load more".
 * The filters (type, API key) live in the page's query (`/settings/audit?type=…&api_key_id=…`), so
 * Back, a reload or a shared link shows the same list; applying them keeps focus where it is, and a
 * key id in the table is a link to that key's records. A 400 for a filter is shown beside it.
 */
export function setupAuditLogView(ctx: AppContext): { load(): Promise<void> } {
  const panel = byId('panel-audit');
  const form = byId<HTMLFormElement>('audit-filters');
  const typeSelect = byId<HTMLSelectElement>('audit-type');
  const keySelect = byId<HTMLSelectElement>('audit-key');
  const clear = byId<HTMLAnchorElement>('audit-clear');
  const resultsTitle = byId('audit-events-title');
  const countLine = byId('audit-count');
  const problem = byId('audit-error');
  const empty = byId('audit-empty');
  const table = byId<HTMLTableElement>('audit-table');
  const rows = byId<HTMLTableSectionElement>('audit-rows');
  const more = byId<HTMLButtonElement>('audit-more');
  const moreError = byId('audit-more-error');

  let filters: AuditFilters = { type: null, apiKeyId: null };
  const shown = new Set<string>();
  let lastId: string | null = null;
  let hasMore = false;
  /** Bumped by every load: an answer to an earlier one (filters changed since) is dropped. */
  let generation = 0;

  typeSelect.append(...AUDIT_EVENT_TYPES.map(({ type }) => h('option', { value: type }, typeOptionLabel(type))));

  /** A value from the URL that the select does not offer (a key not listed, a newer type) is added. */
  function select(el: HTMLSelectElement, value: string | null, label: (value: string) => string): void {
    if (value !== null && ![...el.options].some((o) => o.value === value)) el.append(h('option', { value }, label(value)));
    el.value = value ?? '';
  }

  function showFilters(): void {
    select(typeSelect, filters.type, typeOptionLabel);
    select(keySelect, filters.apiKeyId, (id) => id);
    clear.hidden = filters.type === null && filters.apiKeyId === null;
  }

  /**
   * The API key filter offers every live key and the latest revoked or expired ones (an older key is
   * reached from a record's key link); without them it still holds the URL's key.
   */
  async function loadKeys(current: number): Promise<void> {
    let keys;
    try {
      const [live, inactive] = await Promise.all([
        allPages((after) => settingsApi.listKeys({ status: ['active'], limit: LIVE_PAGE_SIZE, startingAfter: after })),
        settingsApi.listKeys({ status: INACTIVE_STATUSES, limit: LIVE_PAGE_SIZE }),
      ]);
      keys = [...live, ...inactive.data];
    } catch {
      // Not this view's failure to report: the events' own request says what is wrong (or works).
      return;
    }
    if (current !== generation) return;
    const chosen = keySelect.value;
    keySelect.replaceChildren(h('option', { value: '' }, 'All keys'), ...keys.map((key) => h('option', { value: key.id }, keyOptionLabel(key))));
    select(keySelect, chosen === '' ? null : chosen, (id) => id);
  }

  /** `api_key.allowed_ips_changed` may wrap after its dots and underscores rather than mid-word. */
  function breakable(text: string): (Node | string)[] {
    return text.split(/(?<=[._])/).flatMap((piece, i) => (i === 0 ? [piece] : [h('wbr'), piece]));
  }

  function none(): HTMLSpanElement {
    return h('span', { class: 'muted' }, h('span', { 'aria-hidden': 'true' }, '—'), h('span', { class: 'visually-hidden' }, 'None'));
  }

  function summary(parts: readonly SummaryPart[]): (Node | string)[] {
    return parts.map((part) => (typeof part === 'string' ? part : 'time' in part ? timeElement(part.time) : externalUrl(part.url)));
  }

  /**
   * One record as a table row. The roles are spelled out: on narrow screens the rows are laid out as
   * cards (CSS `display: block`), which would otherwise cost the table its semantics in some browsers.
   */
  function row(event: AuditEvent): HTMLTableRowElement {
    const cell = (label: string, ...content: (Node | string)[]) => h('td', { role: 'cell', 'data-label': label }, ...content);
    const keyLink = event.api_key_id
      ? h(
          'a',
          { href: PATHS.audit + filtersSearch({ type: null, apiKeyId: event.api_key_id }), 'data-filter-key': event.api_key_id, class: 'wrap-anywhere' },
          h('span', { class: 'visually-hidden' }, 'All events of '),
          h('code', {}, event.api_key_id),
        )
      : none();
    return h(
      'tr',
      { role: 'row', 'data-event-id': event.id, 'data-type': event.type },
      h('th', { role: 'rowheader', scope: 'row', 'data-label': 'Time', tabindex: '-1' }, timeElement(event.occurred_at)),
      // What happened in words, then its type as the API names it (and the type filter offers it).
      cell('Event', h('span', { class: 'audit-table__summary' }, ...summary(eventSummary(event))), h('code', { class: 'audit-table__type' }, ...breakable(event.type))),
      cell('Actor', actorLabel(event.actor, ctx.state.session?.user.id ?? null)),
      cell('Address', event.client_address ? h('code', { class: 'wrap-anywhere' }, event.client_address) : none()),
      cell('API key', keyLink),
    );
  }

  /** Adds a page of records; returns the first new row (for focus after "Load more"). */
  function append(events: readonly AuditEvent[], hasNext: boolean): HTMLTableRowElement | null {
    const fresh = events.filter((e) => !shown.has(e.id));
    const added = fresh.map(row);
    for (const e of fresh) shown.add(e.id);
    rows.append(...added);
    if (events.length > 0) lastId = events[events.length - 1].id;
    // No cursor, no next page: "Load more" could only ask for the first page again.
    hasMore = hasNext && lastId !== null;
    const total = shown.size;
    table.hidden = total === 0;
    empty.hidden = total > 0;
    empty.textContent = filters.type || filters.apiKeyId ? 'No events match these filters.' : 'No events yet.';
    more.hidden = !hasMore;
    countLine.textContent = total === 0 ? '' : `${plural(total, 'event')} shown${hasMore ? '; more are available' : ''}.`;
    return added[0] ?? null;
  }

  function reset(): void {
    rows.replaceChildren();
    shown.clear();
    lastId = null;
    hasMore = false;
  }

  async function load(): Promise<void> {
    const current = (generation += 1);
    const focused = panel.contains(document.activeElement) ? (document.activeElement as HTMLElement) : null;
    filters = filtersFromSearch(location.search);
    showFilters();
    clearFormErrors(form);
    problem.replaceChildren();
    moreError.replaceChildren();
    more.hidden = true;
    table.setAttribute('aria-busy', 'true');
    countLine.textContent = 'Loading events…';
    const keys = loadKeys(current);
    try {
      const page = await settingsApi.auditEvents(filters);
      if (current !== generation) return;
      reset();
      append(page.data, page.has_more);
    } catch (error) {
      if (current !== generation) return;
      if (isUnauthorized(error)) return ctx.sessionLost();
      reset();
      table.hidden = true;
      empty.hidden = true;
      countLine.textContent = '';
      if (error instanceof ApiError && error.status === 400) {
        // A filter the API does not take (a hand-edited URL, a key id mistyped): beside the filter.
        const unmatched = showFieldErrors(form, error.problem.errors);
        setFormError(form, [errorMessage(error), ...unmatched].join(' '));
      } else {
        const retry = h('button', { type: 'button', class: 'button' }, 'Try again');
        retry.addEventListener('click', () => void load());
        problem.replaceChildren(h('p', {}, `The audit log could not be loaded. ${errorMessage(error)}`), retry);
      }
    } finally {
      if (current === generation) table.removeAttribute('aria-busy');
    }
    await keys;
    // The control that started this load went away with the old rows (a key id link, Try again):
    // focus goes to the results rather than falling back to the page's body.
    if (current === generation && focused && !focused.isConnected && !panel.contains(document.activeElement)) (problem.querySelector('button') ?? resultsTitle).focus();
  }

  async function loadMore(): Promise<void> {
    if (more.getAttribute('aria-disabled') === 'true' || !hasMore || lastId === null) return;
    const current = generation;
    more.setAttribute('aria-disabled', 'true');
    more.textContent = 'Loading…';
    moreError.replaceChildren();
    try {
      const page = await settingsApi.auditEvents(filters, { startingAfter: lastId });
      if (current !== generation) return;
      const first = append(page.data, page.has_more);
      // On to what is new; when nothing new came and the button went, to the results heading.
      if (first) first.querySelector<HTMLElement>('th')?.focus();
      else if (more.hidden) resultsTitle.focus();
    } catch (error) {
      if (current !== generation) return;
      if (isUnauthorized(error)) return ctx.sessionLost();
      moreError.replaceChildren(`More events could not be loaded. ${errorMessage(error)}`);
    } finally {
      more.removeAttribute('aria-disabled');
      more.textContent = 'Load more events';
    }
  }

  more.addEventListener('click', () => void loadMore());

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next: AuditFilters = { type: typeSelect.value || null, apiKeyId: keySelect.value || null };
    // The same filters again reload the list without adding a history entry.
    ctx.navigate(PATHS.audit + filtersSearch(next), { focus: false, replace: filtersSearch(next) === filtersSearch(filters) });
  });

  // A key id in the table shows that key's records; a modified click opens them in a new tab as usual.
  rows.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = (event.target as Element | null)?.closest?.('a[data-filter-key]');
    if (!(link instanceof HTMLAnchorElement)) return;
    event.preventDefault();
    ctx.navigate(link.pathname + link.search, { focus: false });
  });

  return { load };
}
