import { API_KEY_CHANGED_V1, API_KEYS_TOPIC, ApiKeyChangedV1, newId, parsePublicId } from '@invoicing/contracts';
import type { BatchedMessage, KafkaEventTransport } from '@invoicing/event-bus';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import type { DataSource } from 'typeorm';
import type { WebhookConfig } from '../config';
import type { DeliveryWorker } from '../delivery/delivery-worker';
import { KeyChangesIngest, KeyChangesIngestController, keyChangeEvents } from './key-ingest';

function changed(change: ApiKeyChangedV1['data']['change'], changedAt = new Date().toISOString()): ApiKeyChangedV1 {
  const keyId = newId('key');
  const org = newId('org');
  return {
    specversion: '1.0',
    id: '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596884',
    source: '/invoicing/auth-service',
    type: API_KEY_CHANGED_V1,
    subject: keyId,
    time: changedAt,
    datacontenttype: 'application/json',
    data: {
      organization_id: org,
      api_key_id: keyId,
      client_id: 'ak_live_abc',
      change,
      api_key: { object: 'api_key', id: keyId, organization_id: org, name: 'ERP', client_id: 'ak_live_abc', scopes: [], status: 'revoked', created_at: changedAt, expires_at: null },
      changed_at: changedAt,
    },
  };
}

const message = (value: unknown, offset = '1') => ({ topic: API_KEYS_TOPIC, partition: 0, offset, key: null, value: Buffer.from(JSON.stringify(value)), timestamp: 0 }) as unknown as BatchedMessage;

describe('key changes → webhook events', () => {
  it('tells an exposure as api_key.exposed and api_key.revoked, each once per message (sources differ by type)', () => {
    const event = changed('exposed');
    const events = keyChangeEvents(event);
    expect(events.map((e) => [e.type, e.sourceId, e.scope])).toEqual([
      ['api_key.exposed', event.id, 'webhook_endpoints'],
      ['api_key.revoked', `${event.id}/api_key.revoked`, 'webhook_endpoints'],
    ]);
    expect(events[0].organizationId).toBe(parsePublicId('org', event.data.organization_id));
    expect(events[0].object).toBe(event.data.api_key);
    expect(keyChangeEvents(changed('secret_rolled')).map((e) => e.type)).toEqual(['api_key.secret_rolled']);
  });

  it('skips types of the topic it does not know, malformed changes and changes past the retention', () => {
    const ingest = Object.create(KeyChangesIngest.prototype) as KeyChangesIngest;
    const warn = jest.fn();
    Object.assign(ingest, { logger: { warn } });
    const old = changed('revoked', new Date(Date.now() - 31 * 86_400_000).toISOString());
    const bad = { ...changed('revoked'), data: { ...changed('revoked').data, change: 'renamed' } };
    const later = { ...changed('revoked'), type: 'invoicing.auth.api_key_renamed.v1' };
    const events = ingest.toEvents([message(later), message(old), message(bad, '3'), message('not json'), message(changed('expiring'))]);
    expect(events.map((e) => e.type)).toEqual(['api_key.expiring']);
    // Only the malformed change is worth a warning; an unknown type is skipped quietly.
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toContain(`${API_KEYS_TOPIC} at offset 3`);
  });

  it('subscribes once per service to auth.api-keys.v1 itself (no second reading of the revocation topic), the handler under the topic', () => {
    const subscriptions: Array<Record<string, unknown>> = [];
    const transport = { subscribe: (spec: Record<string, unknown>) => (subscriptions.push(spec), { running: false }) } as unknown as KafkaEventTransport;
    new KeyChangesIngest({} as DataSource, {} as DeliveryWorker, transport, { REVOCATION_FETCH_MAX_WAIT_MS: 100 } as WebhookConfig);
    expect(subscriptions).toEqual([expect.objectContaining({ topic: API_KEYS_TOPIC, delivery: 'once-per-service', groupId: 'webhook-service.api-keys', batch: true })]);
    expect(Object.keys(subscriptions[0])).not.toContain('pattern');
    expect(Reflect.getMetadata(PATTERN_METADATA, KeyChangesIngestController.prototype.apply)).toEqual([API_KEYS_TOPIC]);
  });
});
