/**
 * Verifying a webhook delivery (docs/api.md section 15): the Standard Webhooks signature of the
 * platform's deliveries, with the runtime's Web Crypto only (Node 18+, browsers, workers), so the
 * SDK still imports nothing. Any Standard Webhooks library verifies the same deliveries; this one
 * also knows the platform's event types.
 */
import { InvoicingError } from './errors';
import type { Client, Expense, Invoice, Payment, Product } from './generated/resources';

/** An event as delivered (and as `GET /api/v1/events/{id}` answers). */
interface EventOf<T extends string, O> {
  object: 'event';
  id: string;
  type: T;
  api_version: string;
  created_at: string;
  data: { object: O; previous_attributes?: Record<string, unknown> };
}

/** Every event type the platform sends, each with the type of its `data.object`. */
export type WebhookEvent =
  | EventOf<'invoice.created' | 'invoice.paid' | 'invoice.partially_paid', Invoice>
  | EventOf<'client.created', Client>
  | EventOf<'payment.created', Payment>
  | EventOf<'product.created', Product>
  | EventOf<'expense.created', Expense>
  | EventOf<'api_key.expiring' | 'api_key.revoked' | 'api_key.exposed' | 'api_key.secret_rolled', { object: 'api_key'; id: string } & Record<string, unknown>>
  | EventOf<'webhook_endpoint.test', { object: 'webhook_endpoint'; id: string } & Record<string, unknown>>;

export type WebhookEventType = WebhookEvent['type'];

/** A delivery that is not the platform's, not intact, or too old (a replay): never act on it. */
export class WebhookVerificationError extends InvoicingError {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** Headers as Node (`IncomingHttpHeaders`), Fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Seconds the delivery's timestamp may be from now, either way; default 300 (the specification's). */
  toleranceSeconds?: number;
  /** For tests. */
  now?: () => number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

type Subtle = typeof globalThis.crypto.subtle;

function subtle(): Subtle {
  const crypto = (globalThis as { crypto?: { subtle?: Subtle } }).crypto;
  if (!crypto?.subtle) throw new InvoicingError('Web Crypto (crypto.subtle) is not available in this runtime');
  return crypto.subtle;
}

/** A key made from the secret, or a verification error when the secret is not one (never a DOMException). */
async function importOrRefuse<T>(make: () => Promise<T>): Promise<T> {
  try {
    return await make();
  } catch {
    throw new WebhookVerificationError('the secret is malformed: expected whsec_<base64> (or whpk_<base64> for v1a)');
  }
}

/** Bytes of base64 text; a malformed one decodes to no bytes (which matches nothing). */
function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return new Uint8Array(new ArrayBuffer(0));
  }
  const bytes = new Uint8Array(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function toBase64(bytes: ArrayBuffer): string {
  let binary = '';
  for (const b of new Uint8Array(bytes)) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Compares without stopping at the first difference: the time taken says nothing of where they differ. */
function equalConstantTime(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Checks a delivery and returns its event: `body` exactly as received (the raw text, not a parsed
 * and re-serialised object), its headers, and the endpoint's `whsec_...` secret (or, for an endpoint
 * signed with `v1a`, its `whpk_...` public key). Throws `WebhookVerificationError` when a header is
 * missing, no signature matches, or the timestamp is more than five minutes away.
 *
 * ```ts
 * // `webhooks` of the SDK's entry point
 * const event = await webhooks.verify(rawBody, request.headers, process.env.WEBHOOK_SECRET!);
 * if (event.type === 'invoice.paid') markPaid(event.data.object.id); // data.object is an Invoice
 * ```
 */
async function verify(body: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  const seconds = Number(timestamp);
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('malformed webhook-timestamp');
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  if (Math.abs(now - seconds) > (options.toleranceSeconds ?? 300)) throw new WebhookVerificationError('webhook-timestamp too far from now (a replay, or a wrong clock)');
  // The signed content is `id.timestamp.` and the body's bytes exactly as received.
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : new Uint8Array(body);
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(new ArrayBuffer(prefix.length + bytes.length));
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  const offered = signatures.split(' ').map((s) => s.split(',', 2) as [string, string | undefined]);
  let valid = false;
  if (secret.startsWith('whpk_')) {
    const key = await importOrRefuse(() => subtle().importKey('raw', fromBase64(secret.slice(5)), { name: 'Ed25519' }, false, ['verify']));
    for (const [scheme, signature] of offered) {
      // A malformed entry is one that does not match; another entry may still.
      if (scheme !== 'v1a' || !signature) continue;
      const ok = await subtle().verify({ name: 'Ed25519' }, key, fromBase64(signature), signed).catch(() => false);
      if (ok) valid = true;
    }
  } else {
    const raw = secret.startsWith('whsec_') ? secret.slice(6) : secret;
    const key = await importOrRefuse(() => subtle().importKey('raw', fromBase64(raw), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']));
    const expected = toBase64(await subtle().sign('HMAC', key, signed));
    for (const [scheme, signature] of offered) if (scheme === 'v1' && signature && equalConstantTime(signature, expected)) valid = true;
  }
  if (!valid) throw new WebhookVerificationError('no signature matches: not signed with this secret, or altered');
  try {
    return JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(bytes)) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
}

/** Webhook deliveries: `webhooks.verify(body, headers, secret)`. */
export const webhooks = { verify } as const;
