import { API_KEY_CHANGED_V1, ApiKeyChangedV1, newId, parsePublicId, REVOCATIONS_TOPIC, SESSIONS_REVOKED_V1 } from '@invoicing/contracts';
import type { BatchedMessage } from '@invoicing/event-bus';
import { KeyChangesIngest, keyChangeEvents } from './key-ingest';

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

const message = (value: unknown, offset = '1') => ({ topic: REVOCATIONS_TOPIC, partition: 0, offset, key: null, value: Buffer.from(JSON.stringify(value)), timestamp: 0 }) as unknown as BatchedMessage;

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

  it('skips the revocations themselves, malformed changes and changes past the retention', () => {
    const ingest = Object.create(KeyChangesIngest.prototype) as KeyChangesIngest;
    Object.assign(ingest, { logger: { warn: jest.fn() } });
    const old = changed('revoked', new Date(Date.now() - 31 * 86_400_000).toISOString());
    const bad = { ...changed('revoked'), data: { ...changed('revoked').data, change: 'renamed' } };
    const events = ingest.toEvents([message({ type: SESSIONS_REVOKED_V1 }), message(old), message(bad), message(changed('expiring'))]);
    expect(events.map((e) => e.type)).toEqual(['api_key.expiring']);
  });
});
