import { createHmac, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { webhooks, WebhookVerificationError } from './webhooks';

const body = JSON.stringify({ object: 'event', id: 'wev_1', type: 'invoice.paid', api_version: '2026-11-26', created_at: '', data: { object: { object: 'invoice', id: 'inv_1' } } });

describe('webhooks.verify', () => {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const now = new Date();
  const headersFor = (s = secret, id = 'wev_1', at = now) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    // Signed by the reference implementation: what the platform sends, checked by an outside judge.
    'webhook-signature': new Webhook(s).sign(id, at, body),
  });

  it('accepts what the reference library signs, with headers as Node or Fetch gives them', async () => {
    expect((await webhooks.verify(body, headersFor(), secret)).type).toBe('invoice.paid');
    expect((await webhooks.verify(new TextEncoder().encode(body), new Headers(headersFor()), secret)).id).toBe('wev_1');
  });

  it('accepts either of two signatures (a roll), refuses another secret, an altered body, a missing header, an old timestamp', async () => {
    const other = `whsec_${randomBytes(24).toString('base64')}`;
    const both = { ...headersFor(), 'webhook-signature': `${headersFor(other)['webhook-signature']} ${headersFor()['webhook-signature']}` };
    await expect(webhooks.verify(body, both, secret)).resolves.toBeDefined();
    await expect(webhooks.verify(body, headersFor(), other)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(webhooks.verify(body.replace('paid', 'void'), headersFor(), secret)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(webhooks.verify(body, { ...headersFor(), 'webhook-id': 'wev_2' }, secret)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(webhooks.verify(body, { 'webhook-id': 'wev_1' }, secret)).rejects.toThrow(/missing/);
    const old = new Date(now.getTime() - 600_000);
    await expect(webhooks.verify(body, headersFor(secret, 'wev_1', old), secret)).rejects.toThrow(/too far/);
  });

  it('takes the body as bytes (a Buffer), skips a malformed signature beside a valid one, and refuses a malformed secret with its own error', async () => {
    expect((await webhooks.verify(Buffer.from(body), headersFor(), secret)).id).toBe('wev_1');
    const messy = { ...headersFor(), 'webhook-signature': `v1,%%%not-base64 v1a,@@ ${headersFor()['webhook-signature']}` };
    await expect(webhooks.verify(body, messy, secret)).resolves.toBeDefined();
    await expect(webhooks.verify(body, headersFor(), 'whsec_%%%')).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(webhooks.verify(body, headersFor(), 'whpk_%%%')).rejects.toBeInstanceOf(WebhookVerificationError);
  });

  it('verifies v1a (ed25519) with the whpk_ public key alone', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const spki = publicKey.export({ format: 'der', type: 'spki' });
    const whpk = `whpk_${spki.subarray(spki.length - 32).toString('base64')}`;
    const ts = String(Math.floor(Date.now() / 1000));
    const signature = sign(null, Buffer.from(`wev_1.${ts}.${body}`), privateKey).toString('base64');
    const headers = { 'webhook-id': 'wev_1', 'webhook-timestamp': ts, 'webhook-signature': `v1a,${signature}` };
    expect((await webhooks.verify(body, headers, whpk)).type).toBe('invoice.paid');
    const hmacOnly = { ...headers, 'webhook-signature': `v1,${createHmac('sha256', 'x').update('y').digest('base64')}` };
    await expect(webhooks.verify(body, hmacOnly, whpk)).rejects.toBeInstanceOf(WebhookVerificationError);
  });
});
