import { Webhook } from 'standardwebhooks';
import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box';
import { newSigningSecret, publicKeyOf, signedHeaders } from './standard-webhooks';
import { parseRetrySchedule } from '../delivery/retry-schedule';

describe('Standard Webhooks signatures', () => {
  it('v1: the reference verifier accepts ours, and signs exactly as we do', () => {
    const { secret, shown } = newSigningSecret('v1');
    const body = JSON.stringify({ type: 'client.created', data: { object: { name: 'Zoë' } } });
    const ts = Math.floor(Date.now() / 1000);
    const headers = signedHeaders([secret], 'wev_0193', ts, body);
    expect(new Webhook(shown).verify(body, headers)).toEqual(JSON.parse(body));
    expect(headers['webhook-signature']).toBe(new Webhook(shown).sign('wev_0193', new Date(ts * 1000), body));
  });

  it('v1: with two secrets (a roll), each verifies alone', () => {
    const a = newSigningSecret('v1');
    const b = newSigningSecret('v1');
    const headers = signedHeaders([b.secret, a.secret], 'wev_1', Math.floor(Date.now() / 1000), '{}');
    expect(() => new Webhook(a.shown).verify('{}', headers)).not.toThrow();
    expect(() => new Webhook(b.shown).verify('{}', headers)).not.toThrow();
    expect(() => new Webhook(newSigningSecret('v1').shown).verify('{}', headers)).toThrow();
  });

  it('v1a: the shown key is the public key of the stored one', () => {
    const { secret, shown } = newSigningSecret('v1a');
    expect(shown).toMatch(/^whpk_/);
    expect(publicKeyOf(secret)).toBe(shown);
    expect(signedHeaders([secret], 'wev_1', 1, '{}')['webhook-signature']).toMatch(/^v1a,/);
  });
});

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));
  it('opens what it sealed for the same endpoint only', () => {
    const sealed = box.seal(Buffer.from('secret'), 'endpoint-a');
    expect(box.open(sealed, 'endpoint-a').toString()).toBe('secret');
    expect(() => box.open(sealed, 'endpoint-b')).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'endpoint-a')).toThrow();
    expect(sealed.includes(Buffer.from('secret'))).toBe(false);
  });
});

describe('retry schedule', () => {
  it('parses durations, the first attempt immediate', () => {
    expect(parseRetrySchedule('0,5s,5m,30m,2h,5h,10h,10h')).toEqual([0, 5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000]);
    expect(parseRetrySchedule('0,300ms')).toEqual([0, 300]);
    expect(parseRetrySchedule('5s,5s')).toBeNull();
    expect(parseRetrySchedule('0,5')).toBeNull();
    expect(parseRetrySchedule('0,x')).toBeNull();
    expect(parseRetrySchedule(Array(21).fill('0').join(','))).toBeNull();
  });
});
