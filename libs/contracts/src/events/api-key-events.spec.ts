import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newId } from '../ids';
import * as contracts from '../index';
import { API_KEY_CHANGED_V1, API_KEY_CHANGES, API_KEY_EVENT_SCHEMAS, API_KEYS_TOPIC, validateApiKeyEvent } from './api-key-events';
import { REVOCATION_EVENT_SCHEMAS, validateAuthTopicEvent, validateRevocationEvent } from './revocation-events';

const keyId = newId('key');
const organizationId = newId('org');

const key = (status: string) => ({
  object: 'api_key',
  id: keyId,
  organization_id: organizationId,
  name: 'ERP',
  client_id: 'ak_live_abcDEF123',
  scopes: ['read:invoices'],
  status,
  created_at: '2026-11-21T10:00:00.000Z',
  expires_at: null,
  revoked_at: '2026-11-21T10:00:00.000Z',
});

function changed(change: string, api_key: unknown, overrides: Record<string, unknown> = {}) {
  return {
    specversion: '1.0',
    id: 'a0a0a0a0-0000-7000-8000-000000000001',
    source: '/invoicing/auth-service',
    type: API_KEY_CHANGED_V1,
    subject: keyId,
    time: '2026-11-21T10:00:00.000Z',
    datacontenttype: 'application/json',
    data: { organization_id: organizationId, api_key_id: keyId, client_id: 'ak_live_abcDEF123', change, api_key, changed_at: '2026-11-21T10:00:00.000Z' },
    ...overrides,
  };
}

describe('validateApiKeyEvent', () => {
  it('accepts a change told by webhook with the key as the settings API shows it, and no other change', () => {
    const value = changed('revoked', key('revoked'));
    expect(validateApiKeyEvent(value)).toEqual({ ok: true, value });
    expect(validateApiKeyEvent(changed('secret_rolled', key('active'))).ok).toBe(true);
    expect(validateApiKeyEvent(changed('renamed', key('active'))).ok).toBe(false);
    expect(validateApiKeyEvent(changed('revoked', { ...key('revoked'), status: 'gone' })).ok).toBe(false);
    expect(validateApiKeyEvent(changed('revoked', { id: newId('key') })).ok).toBe(false);
    expect(validateApiKeyEvent(changed('revoked', key('revoked'), { subject: newId('org') })).ok).toBe(false);
  });

  it('refuses a type it does not know, or no object at all', () => {
    expect(validateApiKeyEvent(changed('revoked', key('revoked'), { type: 'invoicing.auth.api_key_renamed.v1' }))).toEqual({
      ok: false,
      errors: ['unknown event type "invoicing.auth.api_key_renamed.v1"'],
    });
    for (const notAnEvent of [null, undefined, 'text', 42, [], { type: 'constructor' }, { type: '__proto__' }]) {
      expect(validateApiKeyEvent(notAnEvent).ok).toBe(false);
    }
  });

  it('is not an event of the revocation topic: its validators refuse it, and the revocation types are refused here', () => {
    const value = changed('revoked', key('revoked'));
    expect(validateAuthTopicEvent(value).ok).toBe(false);
    expect(validateAuthTopicEvent(value, { openReasons: true }).ok).toBe(false);
    expect(validateRevocationEvent(value).ok).toBe(false);
    expect(Object.keys(REVOCATION_EVENT_SCHEMAS)).not.toContain(API_KEY_CHANGED_V1);
    for (const type of Object.keys(REVOCATION_EVENT_SCHEMAS)) expect(validateApiKeyEvent({ ...value, type }).ok).toBe(false);
  });

  it('is exported from the contracts, with its topic, and its schema file is the one it validates with', () => {
    expect(contracts.API_KEYS_TOPIC).toBe('auth.api-keys.v1');
    expect(API_KEYS_TOPIC).toBe('auth.api-keys.v1');
    expect(contracts.validateApiKeyEvent).toBe(validateApiKeyEvent);
    const file = JSON.parse(readFileSync(join(__dirname, 'schemas', 'api-key-changed.v1.schema.json'), 'utf8')) as {
      title: string;
      description: string;
      properties: { data: { properties: { change: { enum: string[] } } } };
    };
    expect(API_KEY_EVENT_SCHEMAS[API_KEY_CHANGED_V1]).toEqual(file);
    expect(file.title).toBe(API_KEY_CHANGED_V1);
    expect(file.description).toContain(`on topic ${API_KEYS_TOPIC} `);
    expect(file.properties.data.properties.change.enum).toEqual([...API_KEY_CHANGES]);
  });
});
