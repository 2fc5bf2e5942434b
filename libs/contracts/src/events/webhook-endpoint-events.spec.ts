import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newId } from '../ids';
import * as contracts from '../index';
import { WEBHOOK_ENDPOINT_DISABLED_V1, WEBHOOK_ENDPOINT_EVENT_SCHEMAS, WEBHOOK_ENDPOINTS_TOPIC, validateWebhookEndpointEvent } from './webhook-endpoint-events';

function event(overrides: Record<string, unknown> = {}, data: Record<string, unknown> = {}) {
  const endpointId = newId('wep');
  return {
    specversion: '1.0',
    id: '0192d5a0-c3b8-8a6e-9f1d-2c3b4a596899',
    source: '/invoicing/webhook-service',
    type: WEBHOOK_ENDPOINT_DISABLED_V1,
    subject: endpointId,
    time: '2026-11-29T10:00:00.000Z',
    datacontenttype: 'application/json',
    data: {
      organization_id: newId('org'),
      endpoint_id: endpointId,
      url: 'https://hooks.example.com/invoicing',
      reason: 'failing',
      failing_since: '2026-11-24T09:58:00.000Z',
      disabled_at: '2026-11-29T10:00:00.000Z',
      ...data,
    },
    ...overrides,
  };
}

describe('validateWebhookEndpointEvent', () => {
  it('accepts a well-formed webhook_endpoint_disabled event', () => {
    const value = event();
    expect(validateWebhookEndpointEvent(value)).toEqual({ ok: true, value });
  });

  it('refuses an event missing a field, with a malformed id or time, or with a field of its own in data', () => {
    const { url: _url, ...withoutUrl } = event().data;
    for (const bad of [
      event({}, { endpoint_id: 'wep_123' }),
      event({}, { organization_id: newId('usr') }),
      event({ subject: newId('key') }),
      event({}, { failing_since: 'yesterday' }),
      event({ time: 'now' }),
      event({}, { url: '' }),
      event({}, { url: `https://example.com/${'a'.repeat(2048)}` }),
      event({}, { reason: '' }),
      event({}, { secret: 'whsec_...' }),
      { ...event(), data: withoutUrl },
      event({ specversion: '0.3' }),
    ]) {
      const result = validateWebhookEndpointEvent(bad);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.errors.length).toBeGreaterThan(0);
    }
  });

  it('takes a reason it does not know yet (the list is open) and refuses a type it does not know, or no object at all', () => {
    expect(validateWebhookEndpointEvent(event({}, { reason: 'some_later_reason' })).ok).toBe(true);
    expect(validateWebhookEndpointEvent(event({ type: 'invoicing.webhooks.webhook_endpoint_enabled.v1' }))).toEqual({
      ok: false,
      errors: ['unknown event type "invoicing.webhooks.webhook_endpoint_enabled.v1"'],
    });
    for (const notAnEvent of [null, undefined, 'text', 42, [], { type: 'constructor' }, { type: '__proto__' }]) {
      expect(validateWebhookEndpointEvent(notAnEvent).ok).toBe(false);
    }
  });

  it('is exported from the contracts, with its topic, and its schema file is the one it validates with', () => {
    expect(contracts.WEBHOOK_ENDPOINTS_TOPIC).toBe('webhooks.endpoints.v1');
    expect(contracts.validateWebhookEndpointEvent).toBe(validateWebhookEndpointEvent);
    expect(WEBHOOK_ENDPOINTS_TOPIC).toBe('webhooks.endpoints.v1');
    const file = JSON.parse(readFileSync(join(__dirname, 'schemas', 'webhook-endpoint-disabled.v1.schema.json'), 'utf8')) as { title: string; description: string };
    expect(WEBHOOK_ENDPOINT_EVENT_SCHEMAS[WEBHOOK_ENDPOINT_DISABLED_V1]).toEqual(file);
    expect(file.title).toBe(WEBHOOK_ENDPOINT_DISABLED_V1);
    expect(file.description).toContain(`on topic ${WEBHOOK_ENDPOINTS_TOPIC} `);
  });
});
