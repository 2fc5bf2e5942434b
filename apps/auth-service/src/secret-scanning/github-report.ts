/**
 * GitHub secret scanning partner program: the pure core of the leaked-secret report endpoint.
 *
 * No I/O here (no HTTP, no database, no key fetching): the controller that wires this in reads the
 * raw body and the two headers, calls these functions in order (size limit, then signature, then
 * parse, then one batched store lookup for the candidates, then the label response), and owns the
 * side effects. Keeping the core pure lets the unit specs cover every refusal without a server.
 *
 * Formats follow GitHub's "Secret scanning partner program" page (github/docs,
 * content/code-security/secret-scanning/secret-scanning-partnership-program/secret-scanning-partner-program.md):
 * - request body: a JSON array of `{ token, type, url, source }` (url may be empty);
 * - headers `Github-Public-Key-Identifier` (which `key_identifier` signed) and
 *   `Github-Public-Key-Signature` (base64 of an ASN.1 DER ECDSA P-256 / SHA-256 signature over the
 *   raw body bytes, "ECDSA-NIST-P256V1-SHA256");
 * - keys document at https://api.github.com/meta/public_keys/secret_scanning:
 *   `{ "public_keys": [{ "key_identifier", "key" (SPKI PEM), "is_current" }] }`;
 * - optional false-positive feedback: a JSON array of `{ token_raw | token_hash, token_type, label }`
 *   with label exactly "true_positive" or "false_positive".
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';

import { isWellFormedSecretKey } from '../keys/credential-format';

/** Where production fetches GitHub's current signing keys (not reachable from this environment). */
export const GITHUB_SECRET_SCANNING_KEYS_URL = 'https://api.github.com/meta/public_keys/secret_scanning';

/** Header names as Node delivers them (lower case); GitHub sends `Github-Public-Key-…`. */
export const GITHUB_KEY_IDENTIFIER_HEADER = 'github-public-key-identifier';
export const GITHUB_SIGNATURE_HEADER = 'github-public-key-signature';

// ---------------------------------------------------------------------------------------------
// Public keys

/** Key identifier -> P-256 public key. Every listed key verifies, current or not (see below). */
export type GithubPublicKeys = ReadonlyMap<string, KeyObject>;

const PEM_PUBLIC_KEY = /^-----BEGIN PUBLIC KEY-----\r?\n[\s\S]+\r?\n-----END PUBLIC KEY-----\s*$/;

/**
 * Parses GitHub's keys document (from a configuration file or variable; production fetches the same
 * document from GITHUB_SECRET_SCANNING_KEYS_URL). Throws with a message naming the faulty entry:
 * this runs at boot, where a loud failure beats an endpoint that silently rejects every report.
 *
 * `is_current` is deliberately ignored: during a rotation GitHub may still sign with the previous
 * key, and a report signed by any key GitHub publishes is authentic.
 */
export function parseGithubPublicKeys(json: string): Map<string, KeyObject> {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    throw new Error('GitHub secret scanning keys: not valid JSON');
  }
  const list = (doc as { public_keys?: unknown } | null)?.public_keys;
  if (typeof doc !== 'object' || doc === null || !Array.isArray(list)) {
    throw new Error('GitHub secret scanning keys: expected an object with a "public_keys" array');
  }
  if (list.length === 0) {
    // An empty list would make the endpoint refuse everything: a configuration mistake, not a state.
    throw new Error('GitHub secret scanning keys: "public_keys" is empty');
  }

  const keys = new Map<string, KeyObject>();
  list.forEach((entry: unknown, i) => {
    const where = `GitHub secret scanning keys: public_keys[${i}]`;
    const { key_identifier: id, key: pem } = (entry ?? {}) as { key_identifier?: unknown; key?: unknown };
    if (typeof id !== 'string' || id.length === 0) throw new Error(`${where}: "key_identifier" must be a non-empty string`);
    if (keys.has(id)) throw new Error(`${where}: duplicate key_identifier ${id}`);
    // Only SPKI public keys: createPublicKey would also derive a public key from a private key PEM,
    // and a private key has no business sitting in this configuration.
    if (typeof pem !== 'string' || !PEM_PUBLIC_KEY.test(pem)) {
      throw new Error(`${where} (${id}): "key" must be a PEM "BEGIN PUBLIC KEY" block`);
    }
    let key: KeyObject;
    try {
      key = createPublicKey({ key: pem, format: 'pem' });
    } catch {
      throw new Error(`${where} (${id}): "key" is not a readable public key`);
    }
    // GitHub signs with ECDSA over NIST P-256 only; any other key type or curve is a key GitHub
    // never signs with, so it is a configuration mistake to report now rather than a dead entry.
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (key.asymmetricKeyType !== 'ec' || curve !== 'prime256v1') {
      throw new Error(`${where} (${id}): expected an EC P-256 (prime256v1) key, got ${key.asymmetricKeyType}${curve ? ` ${curve}` : ''}`);
    }
    keys.set(id, key);
  });
  return keys;
}

// ---------------------------------------------------------------------------------------------
// Signature

export type SignatureCheck =
  | { ok: true }
  | { ok: false; status: 400; reason: 'missing_signature' }
  | { ok: false; status: 401; reason: 'unknown_key' | 'bad_signature' };

/** A DER ECDSA P-256 signature is at most 72 bytes (96 base64 characters); room to spare, no more. */
const MAX_SIGNATURE_CHARS = 256;
/** GitHub's identifiers are 64 hex characters; anything far longer is not one of them. */
const MAX_KEY_IDENTIFIER_CHARS = 256;
/** Canonical, padded standard base64: Buffer.from(…, 'base64') silently skips junk, this does not. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Checks GitHub's signature over the exact raw body bytes (never a re-serialised parse: GitHub's
 * docs warn that spacing and key order must be preserved). Never throws, whatever the input, so a
 * hostile header cannot turn into a 500; every refusal maps to a fixed 4xx and reason.
 *
 * Timing is not a concern: the keys are public and the signature is not a shared secret, so there
 * is nothing for a timing side channel to reveal.
 *
 * `unknown_key` is kept apart from `bad_signature` so that the wiring can refresh the keys document
 * once (GitHub rotated) before answering 401.
 */
export function verifyGithubSignature(
  keys: GithubPublicKeys,
  rawBody: Buffer,
  keyIdentifier: string | undefined,
  signatureB64: string | undefined,
): SignatureCheck {
  if (!keyIdentifier || !signatureB64) return { ok: false, status: 400, reason: 'missing_signature' };
  const key = keyIdentifier.length <= MAX_KEY_IDENTIFIER_CHARS ? keys.get(keyIdentifier) : undefined;
  if (!key) return { ok: false, status: 401, reason: 'unknown_key' };
  if (signatureB64.length > MAX_SIGNATURE_CHARS || !BASE64.test(signatureB64)) {
    return { ok: false, status: 401, reason: 'bad_signature' };
  }
  let valid: boolean;
  try {
    valid = verify('sha256', rawBody, { key, dsaEncoding: 'der' }, Buffer.from(signatureB64, 'base64'));
  } catch {
    // Node 20 answers false for malformed DER; the catch keeps the no-throw promise on any version.
    valid = false;
  }
  return valid ? { ok: true } : { ok: false, status: 401, reason: 'bad_signature' };
}

// ---------------------------------------------------------------------------------------------
// Report body

/** One match GitHub reports. `url` and `source` default to '' (url "may be empty"; older reports had no source). */
export interface GithubReportItem {
  token: string;
  type: string;
  url: string;
  source: string;
}

export interface GithubReportLimits {
  /** Bytes of raw body; the route's Fastify bodyLimit should be the same, this is defence in depth. */
  maxBodyBytes: number;
  /** Matches per report: bounds the store lookup and the response. */
  maxEntries: number;
  /** Our secret keys are 57 characters; GitHub only sends what our registered pattern matches. */
  maxTokenLength: number;
  /** type, url and source are echoed or logged, so they are bounded too. */
  maxFieldLength: number;
}

export const DEFAULT_GITHUB_REPORT_LIMITS: Readonly<GithubReportLimits> = Object.freeze({
  maxBodyBytes: 1024 * 1024,
  maxEntries: 1000,
  maxTokenLength: 256,
  maxFieldLength: 2048,
});

export type GithubReportParse =
  | { ok: true; items: GithubReportItem[] }
  | {
      ok: false;
      status: 400 | 413;
      reason: 'body_too_large' | 'malformed_json' | 'not_an_array' | 'too_many_entries' | 'invalid_entry';
      /** Safe to return to the caller: never contains a token. */
      message: string;
    };

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses an already-verified report body. Returns a typed refusal instead of throwing, so the
 * controller maps it straight to a 4xx with nothing changed. Unknown extra fields are ignored:
 * GitHub added `source` once and may add more.
 */
export function parseGithubReport(
  rawBody: Buffer,
  limits: GithubReportLimits = DEFAULT_GITHUB_REPORT_LIMITS,
): GithubReportParse {
  if (rawBody.length > limits.maxBodyBytes) {
    return { ok: false, status: 413, reason: 'body_too_large', message: `report body exceeds ${limits.maxBodyBytes} bytes` };
  }
  let doc: unknown;
  try {
    // Invalid UTF-8 is refused rather than replaced with U+FFFD: a mangled token helps nobody.
    doc = JSON.parse(strictUtf8.decode(rawBody));
  } catch {
    return { ok: false, status: 400, reason: 'malformed_json', message: 'report body is not valid UTF-8 JSON' };
  }
  if (!Array.isArray(doc)) {
    return { ok: false, status: 400, reason: 'not_an_array', message: 'report body must be a JSON array of matches' };
  }
  if (doc.length > limits.maxEntries) {
    return {
      ok: false,
      status: 413,
      reason: 'too_many_entries',
      message: `report has ${doc.length} matches, at most ${limits.maxEntries} are accepted per request`,
    };
  }

  // One odd match must not cost the others their revocation: an entry without a token cannot be
  // labelled and is skipped; informational fields that are not strings or too long are blanked or
  // cut; a token longer than ours can be is kept (it will be labelled false_positive).
  const items: GithubReportItem[] = [];
  const field = (value: unknown) => (typeof value === 'string' ? value.slice(0, limits.maxFieldLength) : '');
  for (const entry of doc as unknown[]) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) continue;
    const { token, type, url, source } = entry as Record<string, unknown>;
    if (typeof token !== 'string' || token.length === 0) continue;
    // Copy into a fresh object: nothing from the parsed JSON (extra keys, __proto__) travels on.
    items.push({ token: token.slice(0, Math.max(limits.maxTokenLength, 1)), type: field(type), url: field(url), source: field(source) });
  }
  return { ok: true, items };
}

// ---------------------------------------------------------------------------------------------
// Classification and response

/**
 * 'not_ours': not a checksum-valid secret key (wrong prefix, length, alphabet or CRC32), so it can
 * never have been issued here: a false positive, decided without a database lookup.
 * 'candidate': well formed; only the store can say whether it was actually issued.
 *
 * Only secret keys (sk_live_) are classified: they are the credential registered with GitHub.
 */
export type TokenClass = 'not_ours' | 'candidate';

export function classifyToken(token: string): TokenClass {
  return isWellFormedSecretKey(token) ? 'candidate' : 'not_ours';
}

/** The distinct candidate tokens of a report, for one batched store lookup (a report may repeat a token). */
export function candidateTokens(items: readonly GithubReportItem[]): string[] {
  return [...new Set(items.map((item) => item.token).filter((token) => classifyToken(token) === 'candidate'))];
}

export type GithubLabel = 'true_positive' | 'false_positive';

/** One element of GitHub's feedback array (raw-token form). */
export interface GithubLabelEntry {
  token_raw: string;
  token_type: string;
  label: GithubLabel;
}

/**
 * GitHub's feedback array, one element per reported match, in report order.
 *
 * `issuedTokens` holds the candidates the store recognised as secret keys it issued, whether still
 * active or already revoked: "true_positive" means a real credential leaked, not that it still
 * works. A token that fails the format check is labelled false_positive even if the caller put it
 * in the set, so the no-lookup rule cannot be bypassed by a wiring mistake.
 *
 * The raw form (`token_raw`) is used rather than `token_hash`: GitHub sent us the token in clear and
 * already holds it, and its docs say "SHA-256" without fixing the encoding (hex or base64) of the
 * hash, so the raw form is the one that cannot be misread.
 */
export function labelResponse(items: readonly GithubReportItem[], issuedTokens: ReadonlySet<string>): GithubLabelEntry[] {
  return items.map((item) => ({
    token_raw: item.token,
    token_type: item.type,
    label: classifyToken(item.token) === 'candidate' && issuedTokens.has(item.token) ? 'true_positive' : 'false_positive',
  }));
}
