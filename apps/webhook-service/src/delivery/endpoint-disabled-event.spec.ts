import { parsePublicId, validateWebhookEndpointEvent, WEBHOOK_ENDPOINT_DISABLED_V1 } from '@invoicing/contracts';
import { randomUUID } from 'node:crypto';
import { endpointDisabledEvent, endpointDisabledEventId, EVENT_SOURCE } from './endpoint-disabled-event';

const endpoint = (overrides: Partial<Parameters<typeof endpointDisabledEvent>[0]> = {}) => ({
  endpointId: '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596878',
  organizationId: '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596870',
  url: 'https://erp.acme.example/webhooks/invoicing',
  failingSince: new Date('2026-11-19T09:58:12.345Z'),
  disabledAt: new Date('2026-11-24T10:00:00.000Z'),
  ...overrides,
});

describe('endpointDisabledEvent', () => {
  it('is a valid CloudEvent of its contract: keyed and subjected by the endpoint, timed at the disabling', () => {
    const event = endpointDisabledEvent(endpoint());
    expect(validateWebhookEndpointEvent(event)).toEqual({ ok: true, value: event });
    expect(event).toEqual({
      specversion: '1.0',
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      source: EVENT_SOURCE,
      type: WEBHOOK_ENDPOINT_DISABLED_V1,
      subject: 'wep_0192d5a0c3b87a6e9f1d2c3b4a596878',
      time: '2026-11-24T10:00:00.000Z',
      datacontenttype: 'application/json',
      data: {
        organization_id: 'org_0192d5a0c3b87a6e9f1d2c3b4a596870',
        endpoint_id: 'wep_0192d5a0c3b87a6e9f1d2c3b4a596878',
        url: 'https://erp.acme.example/webhooks/invoicing',
        reason: 'failing',
        failing_since: '2026-11-19T09:58:12.345Z',
        disabled_at: '2026-11-24T10:00:00.000Z',
      },
    });
    expect(parsePublicId('wep', event.subject)).toBe(endpoint().endpointId);
  });

  it('has one id per disabling: the same endpoint and failing_since give the same id whenever it is written, anything else another', () => {
    const first = endpointDisabledEvent(endpoint());
    // An attempt still in flight when the endpoint was disabled reports it again, a moment later.
    const again = endpointDisabledEvent(endpoint({ disabledAt: new Date('2026-11-24T10:00:00.250Z') }));
    expect(again.id).toBe(first.id);
    expect(endpointDisabledEventId(endpoint().endpointId, endpoint().failingSince)).toBe(first.id);
    // Failing again after a success or a re-enable (failing_since starts over), or another endpoint.
    expect(endpointDisabledEvent(endpoint({ failingSince: new Date('2026-12-01T08:00:00.000Z') })).id).not.toBe(first.id);
    expect(endpointDisabledEvent(endpoint({ endpointId: randomUUID() })).id).not.toBe(first.id);
  });

  it('throws rather than enqueue an event its contract refuses', () => {
    expect(() => endpointDisabledEvent(endpoint({ url: '' }))).toThrow(/fails its schema/);
    expect(() => endpointDisabledEvent(endpoint({ url: `https://example.com/${'a'.repeat(2048)}` }))).toThrow(/fails its schema/);
    expect(() => endpointDisabledEvent(endpoint({ failingSince: new Date(NaN) }))).toThrow();
  });
});
