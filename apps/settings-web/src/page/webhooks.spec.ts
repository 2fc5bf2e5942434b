import {
  attemptsPath,
  defaultReplaySince,
  endpointIdFromSearch,
  endpointStatus,
  eventsSummary,
  latencyLabel,
  localInputValue,
  outcomeLabel,
  pageQuery,
  replaySince,
  responseLabel,
  statusSentence,
} from './webhooks';

const ID = 'wep_0193a1b2c3d4e5f60718293a4b5c6d7e';
const at = (iso: string) => `<${iso}>`;

describe('Settings → Webhooks, without DOM', () => {
  it('reads an endpoint’s status: enabled, failing, disabled and why', () => {
    expect(statusSentence({ status: 'enabled', disabled_reason: null, failing_since: null }, at)).toBe('Enabled');
    expect(statusSentence({ status: 'enabled', disabled_reason: null, failing_since: '2026-11-20T10:00:00.000Z' }, at)).toBe('Enabled: failing since <2026-11-20T10:00:00.000Z>');
    expect(statusSentence({ status: 'disabled', disabled_reason: 'failing', failing_since: '2026-11-20T10:00:00.000Z' }, at)).toBe('Disabled: failing since <2026-11-20T10:00:00.000Z>');
    expect(statusSentence({ status: 'disabled', disabled_reason: 'failing', failing_since: null }, at)).toBe('Disabled: failing');
    expect(statusSentence({ status: 'disabled', disabled_reason: 'requested', failing_since: null }, at)).toBe('Disabled: by request');
    expect(statusSentence({ status: 'paused', disabled_reason: null, failing_since: null }, at)).toBe('paused');
    expect(endpointStatus({ status: 'enabled', disabled_reason: null, failing_since: '2026-11-20T10:00:00.000Z' }).tone).toBe('warning');
    expect(endpointStatus({ status: 'disabled', disabled_reason: 'failing', failing_since: null }).tone).toBe('inactive');
  });

  it('summarizes the events: all of them, or the types', () => {
    expect(eventsSummary(['*'])).toBe('All events');
    expect(eventsSummary(['invoice.created', 'invoice.paid'])).toBe('invoice.created, invoice.paid');
  });

  it('words an attempt’s outcome, answer and latency', () => {
    expect(outcomeLabel('succeeded')).toBe('Succeeded');
    expect(outcomeLabel('failed')).toBe('Failed');
    expect(responseLabel({ response_status: 200, error: null })).toBe('200');
    expect(responseLabel({ response_status: 500, error: 'http_status' })).toBe('500');
    expect(responseLabel({ response_status: 302, error: 'redirect_not_followed' })).toBe('302 (redirect not followed)');
    expect(responseLabel({ response_status: null, error: 'connection_refused' })).toBe('No answer: connection refused');
    expect(responseLabel({ response_status: null, error: null })).toBe('No answer');
    expect(latencyLabel(87)).toBe('87 ms');
    expect(latencyLabel(15_000)).toBe('15.0 s');
  });

  it('keeps the endpoint of the attempts view in the query, and takes only an endpoint id from it', () => {
    expect(attemptsPath('/settings/webhooks/attempts', ID)).toBe(`/settings/webhooks/attempts?endpoint=${ID}`);
    expect(endpointIdFromSearch(`?endpoint=${ID}`)).toBe(ID);
    expect(endpointIdFromSearch('?endpoint=../../events')).toBeNull();
    expect(endpointIdFromSearch('?endpoint=key_0193a1b2c3d4e5f60718293a4b5c6d7e')).toBeNull();
    expect(endpointIdFromSearch('')).toBeNull();
  });

  it('asks for pages with a limit and a cursor', () => {
    expect(pageQuery({ limit: 25 })).toBe('?limit=25');
    expect(pageQuery({ limit: 25, startingAfter: 'wat_1' })).toBe('?limit=25&starting_after=wat_1');
  });

  it('turns the replay’s local date and time into an instant in the past', () => {
    const now = Date.parse('2026-11-26T12:00:00.000Z');
    expect(replaySince('', now)).toEqual({ ok: false, message: 'Enter a date and time.' });
    expect(replaySince('yesterday', now)).toMatchObject({ ok: false });
    expect(replaySince(localInputValue(new Date(now + 3600_000)), now)).toEqual({ ok: false, message: 'Choose a time in the past.' });
    const since = replaySince(defaultReplaySince(now), now);
    // A day back, to the minute of the reader's clock (the input has no seconds).
    expect(since).toEqual({ ok: true, since: new Date(now - 24 * 3600_000).toISOString() });
    expect(localInputValue(new Date(2026, 0, 5, 7, 3))).toBe('2026-01-05T07:03');
  });
});
