import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject, randomBytes, sign as signWith } from 'node:crypto';

/**
 * Signatures of the Standard Webhooks specification (standardwebhooks.com): the signed content is
 * `${webhook-id}.${webhook-timestamp}.${body}`; `v1,<base64>` is its HMAC-SHA256 under the bytes of
 * a `whsec_<base64>` secret, `v1a,<base64>` its ed25519 signature under a `whsk_` key (the receiver
 * holds the `whpk_` public key). Several signatures go in one header, space-separated: while a rolled
 * secret overlaps the new one, both sign.
 */
export type SignatureScheme = 'v1' | 'v1a';

export interface SigningSecret {
  scheme: SignatureScheme;
  /** v1: the HMAC key bytes. v1a: the ed25519 private key, PKCS#8 DER. */
  key: Buffer;
}

/** A new secret: what is stored (encrypted) and what the endpoint's owner is shown once. */
export function newSigningSecret(scheme: SignatureScheme): { secret: SigningSecret; shown: string } {
  if (scheme === 'v1') {
    // 24 bytes, as the reference libraries generate: 192 bits, under their 64-byte maximum.
    const key = randomBytes(24);
    return { secret: { scheme, key }, shown: `whsec_${key.toString('base64')}` };
  }
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    secret: { scheme, key: privateKey.export({ format: 'der', type: 'pkcs8' }) },
    shown: `whpk_${rawPublicKey(publicKey).toString('base64')}`,
  };
}

/** The raw 32 bytes of an ed25519 public key (its SPKI DER ends with them). */
function rawPublicKey(key: KeyObject): Buffer {
  const der = key.export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - 32);
}

/** `whpk_...` of a stored v1a secret: what the endpoint shows again (it is public). */
export function publicKeyOf(secret: SigningSecret): string | null {
  if (secret.scheme !== 'v1a') return null;
  return `whpk_${rawPublicKey(createPublicKey(createPrivateKey({ key: secret.key, format: 'der', type: 'pkcs8' }))).toString('base64')}`;
}

export function signature(secret: SigningSecret, id: string, timestampSeconds: number, body: string): string {
  const content = `${id}.${timestampSeconds}.${body}`;
  if (secret.scheme === 'v1') return `v1,${createHmac('sha256', secret.key).update(content).digest('base64')}`;
  const key = createPrivateKey({ key: secret.key, format: 'der', type: 'pkcs8' });
  return `v1a,${signWith(null, Buffer.from(content), key).toString('base64')}`;
}

/** The three headers of a delivery, signed with every secret given (the current one first). */
export function signedHeaders(secrets: SigningSecret[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signature(s, id, timestampSeconds, body)).join(' '),
  };
}
