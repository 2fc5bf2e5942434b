/** Signing keys by `kid`. One key signs; every key verifies, so keys rotate without mass logout. */
export interface KeyRing {
  signingKid: string;
  keys: ReadonlyMap<string, Buffer>;
}

const KID = /^[A-Za-z0-9._-]{1,64}$/;
/** HS256 keys shorter than the hash output weaken the MAC (RFC 7518 section 3.2). */
export const MIN_KEY_BYTES = 32;

/**
 * Parses `kid=base64url-secret[,kid=secret...]`. `signingKid` defaults to the first entry. Throws with
 * a message naming the entry (never the secret) when an entry is malformed or too short.
 */
export function parseKeyRing(spec: string, signingKid?: string): KeyRing {
  const keys = new Map<string, Buffer>();
  for (const entry of spec.split(',').map((e) => e.trim()).filter(Boolean)) {
    const eq = entry.indexOf('=');
    const kid = eq > 0 ? entry.slice(0, eq) : '';
    if (!KID.test(kid)) throw new Error(`key ring entry ${keys.size + 1} has no valid kid (expected kid=secret)`);
    const secret = Buffer.from(entry.slice(eq + 1), 'base64url');
    if (secret.length < MIN_KEY_BYTES) {
      throw new Error(`key ring entry "${kid}" decodes to ${secret.length} bytes; at least ${MIN_KEY_BYTES} are required`);
    }
    if (keys.has(kid)) throw new Error(`key ring has kid "${kid}" twice`);
    keys.set(kid, secret);
  }
  if (keys.size === 0) throw new Error('key ring is empty');
  const signing = signingKid ?? keys.keys().next().value!;
  if (!keys.has(signing)) throw new Error(`signing kid "${signing}" is not in the key ring`);
  return { signingKid: signing, keys };
}
