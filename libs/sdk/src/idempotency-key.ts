/**
 * Idempotency-Key values: a random UUID v4, made once per create call and sent with every attempt
 * of it, so that a retry after a lost answer replays the first result instead of creating twice.
 */

/** The parts of Web Crypto used here; present in Node 19+ and browsers, sometimes absent in Node 18. */
interface CryptoLike {
  randomUUID?: () => string;
  getRandomValues?: <T extends Uint8Array>(array: T) => T;
}

/**
 * A new UUID v4. Prefers `crypto.randomUUID`, then `crypto.getRandomValues`; `Math.random` is the
 * last resort for runtimes without Web Crypto: the key has to be unique, not secret, and a
 * collision within the 24-hour window would need two calls with the same body to matter.
 */
export function newIdempotencyKey(crypto: CryptoLike | undefined = (globalThis as { crypto?: CryptoLike }).crypto): string {
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  const bytes = new Uint8Array(16);
  if (typeof crypto?.getRandomValues === 'function') {
    crypto.getRandomValues(bytes);
  } else {
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  }
  bytes[6] = (bytes[6] & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
