import { createHash, randomFillSync, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { CLIENT_ID_PREFIX, REFRESH_TOKEN_PREFIX, SECRET_KEY_PREFIX } from '@invoicing/contracts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** 43 base62 characters carry 256.03 bits (43 x log2 62), the minimum docs/api.md, section 3 promises. */
const SECRET_RANDOM_CHARS = 43;
/** Client IDs are public but still unguessable: 24 characters, about 143 bits. */
const CLIENT_ID_RANDOM_CHARS = 24;
/** 6 base62 characters hold any CRC32 value (62^6 > 2^32). */
const CHECKSUM_CHARS = 6;

// The prefixes are the contract's (resource services name them in their 401s too).
export { CLIENT_ID_PREFIX, REFRESH_TOKEN_PREFIX, SECRET_KEY_PREFIX };

/**
 * CSPRNG bytes drawn from a pool refilled 8 KiB at a time: one `randomFillSync` per ~90 credentials
 * instead of one per credential (a syscall and a buffer each; it showed in the token endpoint's
 * profile). Bytes are used once and never leave the process except as the credentials themselves.
 */
const POOL_BYTES = 8192;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

function randomByte(): number {
  if (poolOffset === POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++];
}

/** Uniform base62 characters from a CSPRNG (rejection sampling: no modulo bias). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

function base62Fixed(value: number, width: number): string {
  let out = '';
  let v = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

function checksum(body: string): string {
  return base62Fixed(crc32(body), CHECKSUM_CHARS);
}

function mintChecksummed(prefix: string): string {
  const body = prefix + randomBase62(SECRET_RANDOM_CHARS);
  return body + checksum(body);
}

const CHECKSUMMED = /^[0-9A-Za-z]+$/;

/**
 * True when the value has the prefix, the length and a matching CRC32 checksum. Typos, truncation
 * and credentials of another kind fail here, before any store lookup.
 */
function isWellFormedChecksummed(prefix: string, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  if (value.length !== prefix.length + SECRET_RANDOM_CHARS + CHECKSUM_CHARS || !value.startsWith(prefix)) return false;
  const rest = value.slice(prefix.length);
  if (!CHECKSUMMED.test(rest)) return false;
  const body = value.slice(0, value.length - CHECKSUM_CHARS);
  return checksum(body) === value.slice(-CHECKSUM_CHARS);
}

export function newClientId(): string {
  return CLIENT_ID_PREFIX + randomBase62(CLIENT_ID_RANDOM_CHARS);
}

export function isWellFormedClientId(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length === CLIENT_ID_PREFIX.length + CLIENT_ID_RANDOM_CHARS &&
    value.startsWith(CLIENT_ID_PREFIX) &&
    CHECKSUMMED.test(value.slice(CLIENT_ID_PREFIX.length))
  );
}

export const newSecretKey = (): string => mintChecksummed(SECRET_KEY_PREFIX);
export const isWellFormedSecretKey = (value: unknown): value is string => isWellFormedChecksummed(SECRET_KEY_PREFIX, value);

export const newRefreshToken = (): string => mintChecksummed(REFRESH_TOKEN_PREFIX);
export const isWellFormedRefreshToken = (value: unknown): value is string =>
  isWellFormedChecksummed(REFRESH_TOKEN_PREFIX, value);

/**
 * SHA-256 of a credential. The secrets carry 256 random bits, so a fast hash is not brute-forceable;
 * a slow KDF would only make the token endpoint slow.
 */
export function hashCredential(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

export function hashCredentialHex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time comparison of two hashes. */
export function sameHash(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
