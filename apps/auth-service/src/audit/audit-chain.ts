import { createHash } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * The I/O-free core of the per-organization audit log: what a record is, the one byte string its
 * hash is taken over, how a record is chained onto the previous one, and how a chain is verified.
 * The writer (a transaction that reads the organization's last record and inserts the next) and
 * the `verify-audit` command (which pages the records out of Postgres in `seq` order) are thin
 * shells around these functions, so every security decision lives here and is unit-tested.
 *
 * ## What the chain proves
 *
 * Record n stores `prev_hash` = hash of record n-1 and `hash` = SHA-256 over `prev_hash` and its own
 * canonical content. Because `prev_hash` is inside the hash, each hash commits to the record's whole
 * history, not only to its own fields: a record cannot be changed, removed, inserted or moved
 * without either its own hash no longer matching its content ("altered"), its `seq` no longer
 * following the previous one ("removed_or_reordered") or its `prev_hash` no longer matching the
 * previous record's hash ("broken_link"). Verification names the first record where that happens.
 *
 * ## What it does NOT prove
 *
 * The hash is keyless: anyone who can write to the table can compute it too. Such a writer can
 * - rewrite the chain from any record onwards (change a record, then recompute every later hash),
 * - remove the latest records (truncating the tail leaves a perfectly valid, shorter chain),
 * - append forged records after the last one,
 * and `verifyChain` alone will report a valid chain. Only a copy of a recent head kept where that
 * writer cannot reach detects this: publish `(seq, hash)` of each record (or of a periodic head) on
 * the Kafka stream, in exports or in a separate store, and pass the latest such head to the
 * verifier as `anchor`. A rewrite at or before the anchor then fails ("anchor_mismatch"), a
 * truncation below it fails ("removed_or_reordered"); records after the last anchor remain as
 * trustworthy as the database itself. (A keyed MAC with a key held outside the database would stop
 * forgery by a database-only attacker, but the verifier would then need that key; not done here.)
 * Nor does the chain prove that every event that happened was recorded, or that `occurred_at` is
 * true: it protects what was written, not what should have been.
 *
 * ## Storage contract (for the Postgres adapter)
 *
 * The hash is over values, not over stored bytes, so each column must give back exactly the value
 * that was hashed: ids, `type` and `client_address` as `text` (an `inet` column would rewrite
 * addresses, e.g. `2001:DB8::1` to `2001:db8::1`, and every such record would read as altered),
 * `seq` as `bigint` converted to a JS number (node-postgres returns bigint as a string),
 * `occurred_at` as `timestamptz` read back with `toISOString()` (millisecond values round-trip
 * exactly), `data` as `jsonb` (whose key order does not matter, see {@link canonicalJson}).
 * Writers of one organization must be serialized (a lock on the organization, plus a unique
 * `(organization_id, seq)` so a race fails and retries instead of forking the chain).
 */

/** Domain separation: a hash of an audit record can never be mistaken for a hash of anything else, and a v2 format gets a new tag. */
export const AUDIT_HASH_DOMAIN = 'invoicing-audit-v1';
/** `prev_hash` of an organization's first record. */
export const GENESIS_HASH = '0'.repeat(64);
/**
 * Ceiling on the canonical `data` object, in UTF-8 bytes. Records are meant to be small: a reuse
 * detection that ended thousands of sessions records their count and a bounded list, not all ids.
 */
export const MAX_AUDIT_DATA_BYTES = 16 * 1024;

export const AUDIT_ACTOR_KINDS = ['user', 'api_key', 'system'] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };

export interface AuditActor {
  kind: AuditActorKind;
  /** `usr_…` or `key_…`; null for the system, or when the actor could not be identified (a failed log-in for an unknown address). */
  id: string | null;
}

/** Everything the hash covers. */
export interface AuditRecordContent {
  /** `evt_` + 32 hex (newId('evt')). */
  id: string;
  /** `org_` + 32 hex; the chain is per organization. */
  organization_id: string;
  /** 1-based position in the organization's chain. */
  seq: number;
  /** Lower-case dotted name, e.g. `key.created`, `refresh_token.reuse_detected`. */
  type: string;
  /** ISO 8601 UTC with milliseconds, e.g. `2025-01-02T03:04:05.678Z`. */
  occurred_at: string;
  actor: AuditActor;
  /** The key concerned (`key_…`), if any. */
  api_key_id: string | null;
  client_address: string | null;
  /** Small, JSON only, never a secret ({@link assertNoSecrets}). */
  data: JsonObject;
}

export interface StoredAuditRecord extends AuditRecordContent {
  /** Hash of the previous record of the organization; {@link GENESIS_HASH} for the first. */
  prev_hash: string;
  /** SHA-256 (lower-case hex) of {@link AUDIT_HASH_DOMAIN}, `prev_hash` and the canonical content. */
  hash: string;
}

/** What the writer needs of the organization's last record. */
export type AuditChainTail = Pick<StoredAuditRecord, 'organization_id' | 'seq' | 'hash'>;

/** A point in a chain: `seq` 0 with {@link GENESIS_HASH} is the empty chain. Also the shape of an anchor. */
export interface AuditChainHead {
  seq: number;
  hash: string;
}

export type AuditChainProblem = 'altered' | 'removed_or_reordered' | 'broken_link' | 'wrong_organization' | 'anchor_mismatch';

export interface AuditChainFailure {
  ok: false;
  /** The first record that does not fit. `id` is null only when that record is missing altogether (a truncated tail, found through an anchor). */
  at: { seq: number; id: string | null };
  problem: AuditChainProblem;
  /** Human-readable; holds seqs and hash prefixes, never record content. */
  detail: string;
}

export type AuditChainResult = { ok: true; count: number; head: AuditChainHead } | AuditChainFailure;

export interface VerifyAuditChainOptions {
  /** The organization whose chain this must be; by default the first record's. */
  organizationId?: string;
  /** A head recorded outside the database; the chain must pass through it (see the module comment). */
  anchor?: AuditChainHead;
}

export class AuditRecordError extends Error {
  override readonly name = 'AuditRecordError';
}

// ---------------------------------------------------------------------------------------------
// Canonical JSON
// ---------------------------------------------------------------------------------------------

/** An unpaired UTF-16 surrogate (a paired one is a single code point under the `u` flag). */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * The one serialization of a JSON value that is hashed: RFC 8785 (JCS) for every value it accepts.
 * Object keys sorted by UTF-16 code units (the default `sort()`), recursively; no whitespace;
 * strings and numbers as `JSON.stringify` writes them (ECMAScript number serialization, `-0` as `0`).
 *
 * Why not `JSON.stringify` of the record: the same content must hash the same when it is built by
 * the writer and when it is read back by the verifier, and Postgres does not give the object back
 * as it was given. `jsonb` stores objects with keys ordered by length and then bytes (not insertion
 * order), drops duplicate keys, prints `", "` and `": "`, and re-prints numbers from `numeric`
 * (`1e2` comes back as `100`). `JSON.stringify` follows insertion order, so
 * `{"type":…,"id":…}` written and `{"id":…,"type":…}` read would hash differently and every record
 * would look altered. Canonicalizing the parsed value makes key order, spacing and number spelling
 * irrelevant.
 *
 * Refused, rather than silently changed, is anything that would not survive that round trip or has
 * no single JSON meaning: `undefined` (JSON.stringify drops it from objects but writes `null` in
 * arrays), NaN and ±Infinity (written as `null`), functions, symbols, bigints, objects that are not
 * plain (a Date, a Map, a Buffer, a class instance: their JSON form is whatever their `toJSON`
 * says), sparse arrays, cycles, unpaired surrogates (not valid Unicode; RFC 8785 requires refusing
 * them, and `jsonb` refuses them too) and U+0000 (Postgres `text` and `jsonb` cannot store it).
 * Errors name the path, never the value, which could be a secret.
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, '$', new Set());
}

function serialize(value: unknown, path: string, ancestors: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return serializeString(value, path);
    case 'number':
      if (!Number.isFinite(value)) throw new AuditRecordError(`${path}: ${String(value)} is not a JSON number`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (ancestors.has(value)) throw new AuditRecordError(`${path}: a cycle is not JSON`);
      ancestors.add(value);
      try {
        return Array.isArray(value) ? serializeArray(value, path, ancestors) : serializeObject(value, path, ancestors);
      } finally {
        ancestors.delete(value);
      }
    default:
      throw new AuditRecordError(`${path}: ${typeof value} is not JSON`);
  }
}

function serializeString(value: string, path: string): string {
  if (LONE_SURROGATE.test(value)) throw new AuditRecordError(`${path}: a string holds an unpaired surrogate`);
  if (value.includes('\u0000')) throw new AuditRecordError(`${path}: a string holds U+0000, which Postgres cannot store`);
  return JSON.stringify(value);
}

function serializeArray(value: unknown[], path: string, ancestors: Set<object>): string {
  if (Object.getPrototypeOf(value) !== Array.prototype) throw new AuditRecordError(`${path}: not a plain array`);
  // Extra own properties or holes would be dropped or turned into null: refuse both.
  if (Object.keys(value).length !== value.length) throw new AuditRecordError(`${path}: a sparse array or one with extra properties`);
  return `[${value.map((item, i) => serialize(item, `${path}[${i}]`, ancestors)).join(',')}]`;
}

function serializeObject(value: object, path: string, ancestors: Set<object>): string {
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new AuditRecordError(`${path}: not a plain object`);
  if (Object.getOwnPropertySymbols(value).length > 0) throw new AuditRecordError(`${path}: symbol keys are not JSON`);
  const record = value as Record<string, unknown>;
  const parts = Object.keys(record)
    .sort()
    .map((key) => {
      const childPath = `${path}${pathKey(key)}`;
      return `${serializeString(key, childPath)}:${serialize(record[key], childPath, ancestors)}`;
    });
  return `{${parts.join(',')}}`;
}

/** A key as it appears in an error path: printed only when it is short, plain and no secret. */
function pathKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]{0,39}$/.test(key) && secretShapeOf(key) === null ? `.${key}` : '[key]';
}

// ---------------------------------------------------------------------------------------------
// Secrets
// ---------------------------------------------------------------------------------------------

/**
 * Shapes of the platform's secrets. Matched anywhere in a string (a secret inside an error message
 * or a header is still a secret), and from the first character of secret material: a truncated
 * secret still gives part of it away. Client IDs (`ak_live_`) are public and allowed as such.
 */
const SECRET_SHAPES: ReadonlyArray<{ what: string; pattern: RegExp }> = [
  { what: 'a Secret Key', pattern: /sk_live_[0-9a-z]/i },
  { what: 'a refresh token', pattern: /rt_live_[0-9a-z]/i },
  // Three base64url segments, the first a JSON header ('{"' encodes as 'eyJ'): a JWT (access token).
  { what: 'a JWT', pattern: /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/ },
  // Base64 of 'ak_live_' / 'sk_live_' / 'rt_live_' at the start of the encoded text: an HTTP Basic
  // credential ('client_id:secret') or an encoded secret. Best effort: only the aligned case.
  { what: 'a base64-encoded credential', pattern: /YWtfbGl2ZV|c2tfbGl2ZV|cnRfbGl2ZV/ },
];

function secretShapeOf(value: string): string | null {
  for (const { what, pattern } of SECRET_SHAPES) if (pattern.test(value)) return what;
  return null;
}

/**
 * Throws when any string in `value` (object keys included, at any depth) looks like a Secret Key, a
 * refresh token, a JWT or an encoded credential: the audit log is kept for years, read by
 * administrators and exported, so a secret written into it by mistake would outlive its rotation.
 * The message names where, never what. This recognizes shapes only: a password has none, so
 * writers must pass chosen fields, never a request body.
 */
export function assertNoSecrets(value: unknown, path = 'data'): void {
  walkStrings(value, path, new Set(), (text, at) => {
    const what = secretShapeOf(text);
    if (what !== null) throw new AuditRecordError(`${at} looks like ${what}; an audit record must never hold one`);
  });
}

/**
 * A copy of `data` with every string value that looks like a secret replaced by `"[redacted]"`.
 * For values the platform does not choose (a leak report's URL): what the report says is recorded,
 * minus anything shaped like a credential, rather than refusing the record (and with it the change
 * it records).
 */
export function redactSecrets(data: JsonObject): JsonObject {
  const redact = (value: JsonValue): JsonValue => {
    if (typeof value === 'string') return secretShapeOf(value) === null ? value : '[redacted]';
    if (Array.isArray(value)) return value.map(redact);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]));
    return value;
  };
  return redact(data) as JsonObject;
}

function walkStrings(value: unknown, path: string, ancestors: Set<object>, visit: (text: string, path: string) => void): void {
  if (typeof value === 'string') {
    visit(value, path);
    return;
  }
  if (typeof value !== 'object' || value === null || ancestors.has(value)) return;
  ancestors.add(value);
  if (Array.isArray(value)) {
    value.forEach((item, i) => walkStrings(item, `${path}[${i}]`, ancestors, visit));
  } else {
    for (const [key, item] of Object.entries(value)) {
      const childPath = `${path}${pathKey(key)}`;
      visit(key, `${childPath} (the key)`);
      walkStrings(item, childPath, ancestors, visit);
    }
  }
  ancestors.delete(value);
}

// ---------------------------------------------------------------------------------------------
// Hashing and chaining
// ---------------------------------------------------------------------------------------------

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The hashed fields of a record, picked one by one: columns the row may carry besides them
 * (`prev_hash`, `hash`, an insertion time) are not content, and a field added to the type later
 * changes the hash only when it is added here (with a new {@link AUDIT_HASH_DOMAIN}).
 */
export function auditContentOf(record: AuditRecordContent): AuditRecordContent {
  return {
    id: record.id,
    organization_id: record.organization_id,
    seq: record.seq,
    type: record.type,
    occurred_at: record.occurred_at,
    actor: { kind: record.actor.kind, id: record.actor.id },
    api_key_id: record.api_key_id,
    client_address: record.client_address,
    data: record.data,
  };
}

/**
 * SHA-256 (hex) of `"invoicing-audit-v1\n" + prevHash + "\n" + canonicalJson(content)`, UTF-8.
 * `prevHash` is inside so that each hash commits to the whole chain before it: a removed or
 * reordered record leaves a `prev_hash` that no longer matches, and rewriting one record forces
 * rewriting every later one. The input is unambiguous: `prevHash` is 64 hex digits and canonical
 * JSON never holds a raw newline.
 */
export function auditRecordHash(prevHash: string, content: AuditRecordContent): string {
  if (!HEX64.test(prevHash)) throw new AuditRecordError('prev_hash must be 64 lower-case hex digits');
  return createHash('sha256')
    .update(`${AUDIT_HASH_DOMAIN}\n${prevHash}\n${canonicalJson(auditContentOf(content))}`, 'utf8')
    .digest('hex');
}

const EVENT_ID = /^evt_[0-9a-f]{32}$/;
const ORGANIZATION_ID = /^org_[0-9a-f]{32}$/;
const USER_ID = /^usr_[0-9a-f]{32}$/;
const KEY_ID = /^key_[0-9a-f]{32}$/;
const EVENT_TYPE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The next record of an organization's chain: `content` hashed onto `previous` (null for the
 * organization's first record). Refuses, with an {@link AuditRecordError}, content that is not
 * what the format promises: a wrong `seq` or organization, malformed ids or time, an oversized or
 * non-JSON `data`, or a secret anywhere. These are the writer's bugs, and a record that could not
 * be verified later must not be written now.
 *
 * `previous` is not re-verified here on purpose: a tampered last row must not stop the recording
 * of further security events; `verify-audit` reports it.
 *
 * The returned record holds a copy of `data` made from its canonical form, so what is stored is
 * exactly what was hashed even if the caller mutates its object afterwards.
 */
export function chainNext(previous: AuditChainTail | null, content: AuditRecordContent): StoredAuditRecord {
  const fail = (message: string): never => {
    throw new AuditRecordError(message);
  };
  if (previous !== null) {
    // A bigint column read without conversion is a string: '5' + 1 would be '51'.
    if (!Number.isSafeInteger(previous.seq) || previous.seq < 1) fail('previous.seq must be a positive integer (a bigint column read as a string?)');
    if (!HEX64.test(previous.hash)) fail('previous.hash must be 64 lower-case hex digits');
    if (previous.organization_id !== content.organization_id) fail('content.organization_id differs from the previous record of the chain');
  }
  const expectedSeq = previous === null ? 1 : previous.seq + 1;
  if (content.seq !== expectedSeq) fail(`content.seq must be ${expectedSeq}`);
  if (!EVENT_ID.test(content.id)) fail("content.id must be newId('evt')");
  if (!ORGANIZATION_ID.test(content.organization_id)) fail('content.organization_id must be an org_ id');
  if (content.type.length > 64 || !EVENT_TYPE.test(content.type)) fail('content.type must be a lower-case dotted name of at most 64 characters');
  // One spelling per instant (what timestamptz gives back through toISOString), so it re-hashes.
  if (!ISO_MS.test(content.occurred_at) || new Date(content.occurred_at).toISOString() !== content.occurred_at) {
    fail('content.occurred_at must be an ISO 8601 UTC time with milliseconds (Date#toISOString)');
  }
  checkActor(content.actor, fail);
  if (content.api_key_id !== null && !KEY_ID.test(content.api_key_id)) fail('content.api_key_id must be a key_ id or null');
  if (content.client_address !== null && isIP(content.client_address) === 0) fail('content.client_address must be an IP address or null');
  const data: unknown = content.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) fail('content.data must be a JSON object');
  assertNoSecrets(auditContentOf(content), 'content');
  const canonicalData = canonicalJson(content.data);
  if (Buffer.byteLength(canonicalData, 'utf8') > MAX_AUDIT_DATA_BYTES) fail(`content.data exceeds ${MAX_AUDIT_DATA_BYTES} bytes`);

  const prevHash = previous === null ? GENESIS_HASH : previous.hash;
  const stored: AuditRecordContent = { ...auditContentOf(content), data: JSON.parse(canonicalData) as JsonObject };
  return { ...stored, prev_hash: prevHash, hash: auditRecordHash(prevHash, stored) };
}

function checkActor(actor: AuditActor, fail: (message: string) => never): void {
  if (!(AUDIT_ACTOR_KINDS as readonly string[]).includes(actor.kind)) fail('content.actor.kind must be user, api_key or system');
  if (actor.kind === 'system' && actor.id !== null) fail('content.actor.id must be null for the system');
  if (actor.kind === 'user' && actor.id !== null && !USER_ID.test(actor.id)) fail('content.actor.id must be a usr_ id or null');
  if (actor.kind === 'api_key' && actor.id !== null && !KEY_ID.test(actor.id)) fail('content.actor.id must be a key_ id or null');
}

// ---------------------------------------------------------------------------------------------
// Verification
// ---------------------------------------------------------------------------------------------

const short = (hash: unknown): string => (typeof hash === 'string' ? `${hash.slice(0, 12)}…` : String(hash));

/**
 * Verifies a chain one record at a time, keeping only the last good head: O(1) memory however long
 * the chain, so it runs over a cursor or a pager. Feed records in `seq` order with {@link push},
 * which returns the failure once one is found (and keeps returning it); then call {@link finish}.
 *
 * Checks per record, in this order, so that the problem named is the most specific one:
 * 1. it belongs to the organization (a record copied from another chain) → `wrong_organization`;
 * 2. its `seq` is the previous one + 1, starting at 1 (a gap: removed; a step back: moved or
 *    duplicated) → `removed_or_reordered`, named at the record where the order breaks;
 * 3. its `prev_hash` is the previous record's hash (a changed `prev_hash`, or a previous record
 *    rewritten together with its own hash) → `broken_link`;
 * 4. its hash matches its content (a changed field) → `altered`;
 * 5. at the anchor's `seq`, its hash is the anchor's (history rewritten) → `anchor_mismatch`.
 */
export class AuditChainVerifier {
  private organizationId: string | undefined;
  private readonly anchor: AuditChainHead | undefined;
  private head: AuditChainHead = { seq: 0, hash: GENESIS_HASH };
  private failure: AuditChainFailure | null = null;

  constructor(options: VerifyAuditChainOptions = {}) {
    this.organizationId = options.organizationId;
    if (options.anchor !== undefined) {
      const { seq, hash } = options.anchor;
      if (!Number.isSafeInteger(seq) || seq < 0 || !HEX64.test(hash)) throw new AuditRecordError('anchor must be { seq >= 0, hash: 64 hex digits }');
      if (seq === 0 && hash !== GENESIS_HASH) throw new AuditRecordError('anchor at seq 0 must be the genesis hash');
      this.anchor = { seq, hash };
    }
  }

  push(record: StoredAuditRecord): AuditChainFailure | null {
    if (this.failure !== null) return this.failure;
    const expectedSeq = this.head.seq + 1;
    const at = { seq: Number.isSafeInteger(record.seq) ? record.seq : expectedSeq, id: typeof record.id === 'string' ? record.id : null };
    const fail = (problem: AuditChainProblem, detail: string): AuditChainFailure =>
      (this.failure = { ok: false, at, problem, detail: `seq ${at.seq} (${at.id ?? 'no id'}): ${detail}` });

    this.organizationId ??= record.organization_id;
    if (record.organization_id !== this.organizationId) {
      return fail('wrong_organization', `belongs to another organization than ${this.organizationId}`);
    }
    if (record.seq !== expectedSeq) {
      if (typeof record.seq !== 'number') return fail('removed_or_reordered', `seq is a ${typeof record.seq}, not a number (a bigint column read as a string?)`);
      if (record.seq > expectedSeq) {
        const missing = record.seq === expectedSeq + 1 ? `seq ${expectedSeq} is` : `seqs ${expectedSeq} to ${record.seq - 1} are`;
        return fail('removed_or_reordered', `${missing} missing before it (removed, or moved later)`);
      }
      return fail('removed_or_reordered', `comes after seq ${this.head.seq} (moved earlier, or duplicated)`);
    }
    if (record.prev_hash !== this.head.hash) {
      return fail('broken_link', `prev_hash ${short(record.prev_hash)} is not the hash of ${this.head.seq === 0 ? 'the chain start' : `seq ${this.head.seq}`} (${short(this.head.hash)})`);
    }
    let computed: string;
    try {
      computed = auditRecordHash(record.prev_hash, record);
    } catch (error) {
      // Content that cannot even be canonicalized was never written by chainNext.
      return fail('altered', `content is not canonical JSON (${error instanceof Error ? error.message : 'unknown error'})`);
    }
    if (computed !== record.hash) return fail('altered', `hash ${short(record.hash)} does not match its content (${short(computed)})`);
    if (this.anchor !== undefined && record.seq === this.anchor.seq && record.hash !== this.anchor.hash) {
      return fail('anchor_mismatch', `the anchor kept outside the database says ${short(this.anchor.hash)}: the chain was rewritten at or before this record`);
    }
    this.head = { seq: record.seq, hash: record.hash };
    return null;
  }

  /** The outcome once every record was pushed; a chain that stops short of the anchor was truncated. */
  finish(): AuditChainResult {
    if (this.failure !== null) return this.failure;
    if (this.anchor !== undefined && this.head.seq < this.anchor.seq) {
      const first = this.head.seq + 1;
      this.failure = {
        ok: false,
        at: { seq: first, id: null },
        problem: 'removed_or_reordered',
        detail: `the chain ends at seq ${this.head.seq} but the anchor kept outside the database has seq ${this.anchor.seq}: records from seq ${first} were removed`,
      };
      return this.failure;
    }
    return { ok: true, count: this.head.seq, head: { ...this.head } };
  }
}

/** Verifies records given in `seq` order; stops reading at the first failure. See {@link AuditChainVerifier}. */
export function verifyChain(records: Iterable<StoredAuditRecord>, options: VerifyAuditChainOptions = {}): AuditChainResult {
  const verifier = new AuditChainVerifier(options);
  for (const record of records) if (verifier.push(record) !== null) break;
  return verifier.finish();
}

/**
 * {@link verifyChain} over an async source, e.g. keyset pages (`WHERE seq > $last ORDER BY seq
 * LIMIT n`) flattened by an async generator. Breaking out at the first failure closes the source.
 */
export async function verifyChainAsync(
  records: AsyncIterable<StoredAuditRecord> | Iterable<StoredAuditRecord>,
  options: VerifyAuditChainOptions = {},
): Promise<AuditChainResult> {
  const verifier = new AuditChainVerifier(options);
  for await (const record of records) if (verifier.push(record) !== null) break;
  return verifier.finish();
}
