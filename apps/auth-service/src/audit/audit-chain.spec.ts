import { createHash } from 'node:crypto';
import { newId } from '@invoicing/contracts';
import { newClientId, newRefreshToken, newSecretKey } from '../keys/credential-format';
import {
  AuditChainVerifier,
  AuditRecordContent,
  AuditRecordError,
  GENESIS_HASH,
  MAX_AUDIT_DATA_BYTES,
  StoredAuditRecord,
  assertNoSecrets,
  auditRecordHash,
  canonicalJson,
  chainNext,
  verifyChain,
  verifyChainAsync,
} from './audit-chain';

const ORG = newId('org');
const OTHER_ORG = newId('org');
const KEY = newId('key');
const USER = newId('usr');

function content(organizationId: string, seq: number, overrides: Partial<AuditRecordContent> = {}): AuditRecordContent {
  return {
    id: newId('evt'),
    organization_id: organizationId,
    seq,
    type: 'key.rolled',
    occurred_at: new Date(Date.UTC(2025, 0, 1, 0, 0, 0, seq)).toISOString(),
    actor: { kind: 'user', id: USER },
    api_key_id: KEY,
    client_address: '203.0.113.7',
    data: { overlap_seconds: 3600, end_sessions: false, allowed_ips: ['10.0.0.0/8'], n: seq },
    ...overrides,
  };
}

function buildChain(organizationId: string, length: number): StoredAuditRecord[] {
  const chain: StoredAuditRecord[] = [];
  for (let seq = 1; seq <= length; seq++) chain.push(chainNext(chain[seq - 2] ?? null, content(organizationId, seq)));
  return chain;
}

/** A deep copy, as a row read back from the database would be. */
const copy = (records: StoredAuditRecord[]): StoredAuditRecord[] => JSON.parse(JSON.stringify(records));

/** Keys in the order Postgres jsonb returns them: shorter keys first, then bytewise. */
function jsonbOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrder);
  if (typeof value !== 'object' || value === null) return value;
  const keys = Object.keys(value).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(keys.map((k) => [k, jsonbOrder((value as Record<string, unknown>)[k])]));
}

function jwtShaped(): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b64({ alg: 'ES256', typ: 'at+jwt', kid: 'k1' })}.${b64({ sub: KEY, org_id: ORG, exp: 1 })}.${Buffer.alloc(64, 7).toString('base64url')}`;
}

describe('canonicalJson', () => {
  it('gives the same text whatever the key order, at every depth, and keeps array order', () => {
    const a = { type: 't', data: { b: [3, 1, { y: 1, x: 2 }], a: null }, id: 'e' };
    const b = { id: 'e', data: { a: null, b: [3, 1, { x: 2, y: 1 }] }, type: 't' };
    expect(canonicalJson(a)).toBe('{"data":{"a":null,"b":[3,1,{"x":2,"y":1}]},"id":"e","type":"t"}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
    expect(canonicalJson(jsonbOrder(a))).toBe(canonicalJson(a));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  it('matches the RFC 8785 examples (numbers, escapes, key sorting by UTF-16 code units)', () => {
    const rfc = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'B\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    );
    expect(canonicalJson(rfc)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
    const sorting = JSON.parse('{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}');
    // Read the order off the text: JSON.parse would put the integer-like key "1" first again.
    expect([...canonicalJson(sorting).matchAll(/:"([^"]+)"/g)].map((m) => m[1])).toEqual([
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ]);
    expect(canonicalJson(-0)).toBe('0');
  });

  it('refuses what JSON cannot say once and for all, naming the path and never the value', () => {
    const refused: Array<[unknown, RegExp]> = [
      [NaN, /not a JSON number/],
      [{ a: { b: Infinity } }, /^\$\.a\.b: Infinity/],
      [[1, -Infinity], /\$\[1\]/],
      [undefined, /undefined is not JSON/],
      [{ a: undefined }, /\$\.a: undefined/],
      [[undefined], /\$\[0\]: undefined/],
      [{ f: () => 1 }, /function/],
      [{ n: 10n }, /bigint/],
      [{ s: Symbol('s') }, /symbol/],
      [{ [Symbol('k')]: 1 }, /symbol keys/],
      [{ d: new Date(0) }, /not a plain object/],
      [{ m: new Map() }, /not a plain object/],
      [{ b: Buffer.from('x') }, /not a plain object/],
      [{ c: new (class Thing {})() }, /not a plain object/],
      // eslint-disable-next-line no-sparse-arrays
      [[1, , 3], /sparse/],
      [{ s: 'a\ud800b' }, /unpaired surrogate/],
      [{ ['\udc00']: 1 }, /unpaired surrogate/],
      [{ s: 'a\u0000b' }, /U\+0000/],
    ];
    for (const [value, message] of refused) {
      expect(() => canonicalJson(value)).toThrow(AuditRecordError);
      expect(() => canonicalJson(value)).toThrow(message);
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cycle/);
    // The same object twice is not a cycle.
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
    expect(canonicalJson(Object.assign(Object.create(null), { z: 1, a: 2 }))).toBe('{"a":2,"z":1}');
    expect(canonicalJson('😀')).toBe('"😀"');
  });
});

describe('auditRecordHash', () => {
  it('is SHA-256 over the domain tag, prev_hash and the canonical content', () => {
    const c = content(ORG, 1);
    const expected = createHash('sha256')
      .update(`invoicing-audit-v1\n${GENESIS_HASH}\n${canonicalJson(c)}`, 'utf8')
      .digest('hex');
    expect(auditRecordHash(GENESIS_HASH, c)).toBe(expected);
    expect(canonicalJson(c).startsWith('{"actor":{"id":')).toBe(true);
    // Extra columns of a row are not content.
    expect(auditRecordHash(GENESIS_HASH, { ...c, created_at: 'x' } as AuditRecordContent)).toBe(expected);
    expect(() => auditRecordHash('abc', c)).toThrow(AuditRecordError);
  });

  it('depends on prev_hash, so the same content at another place in a chain hashes differently', () => {
    const c = content(ORG, 1);
    expect(auditRecordHash('f'.repeat(64), c)).not.toBe(auditRecordHash(GENESIS_HASH, c));
  });
});

describe('chainNext', () => {
  it('starts at seq 1 on the genesis hash and links each record to the previous one', () => {
    const [first, second] = buildChain(ORG, 2);
    expect(first.prev_hash).toBe(GENESIS_HASH);
    expect(first.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(second.prev_hash).toBe(first.hash);
    expect(second.hash).toBe(auditRecordHash(first.hash, second));
  });

  it('stores exactly what it hashed, whatever the caller does with its object afterwards', () => {
    const c = content(ORG, 1);
    const record = chainNext(null, c);
    (c.data as { n: number }).n = 99;
    c.type = 'key.revoked';
    expect(record.data.n).toBe(1);
    expect(verifyChain([record]).ok).toBe(true);
  });

  it('refuses content that breaks the format, naming the field', () => {
    const [first] = buildChain(ORG, 1);
    const refused: Array<[AuditChainTailLike, Partial<AuditRecordContent>, RegExp]> = [
      [null, { seq: 2 }, /seq must be 1/],
      [first, { seq: 1 }, /seq must be 2/],
      [first, { seq: 3 }, /seq must be 2/],
      [{ ...first, seq: '1' as unknown as number }, { seq: 2 }, /previous\.seq/],
      [{ ...first, hash: 'nope' }, { seq: 2 }, /previous\.hash/],
      [null, { id: newId('key') }, /content\.id/],
      [null, { organization_id: 'org_x' }, /organization_id/],
      [null, { type: 'Key Rolled' }, /content\.type/],
      [null, { occurred_at: '2025-01-01T00:00:00Z' }, /occurred_at/],
      [null, { occurred_at: '2025-02-30T00:00:00.000Z' }, /occurred_at/],
      [null, { actor: { kind: 'system', id: USER } }, /actor\.id/],
      [null, { actor: { kind: 'user', id: KEY } }, /actor\.id/],
      [null, { actor: { kind: 'api_key', id: USER } }, /actor\.id/],
      [null, { actor: { kind: 'admin' as 'user', id: null } }, /actor\.kind/],
      [null, { api_key_id: 'key_1' }, /api_key_id/],
      [null, { client_address: 'localhost' }, /client_address/],
      [null, { data: [] as unknown as AuditRecordContent['data'] }, /data must be a JSON object/],
      [null, { data: { at: new Date() } as unknown as AuditRecordContent['data'] }, /not a plain object/],
      [null, { data: { big: 'x'.repeat(MAX_AUDIT_DATA_BYTES) } }, /exceeds/],
      [null, { data: { secret: newSecretKey() } }, /content\.data\.secret looks like a Secret Key/],
    ];
    for (const [previous, overrides, message] of refused) {
      expect(() => chainNext(previous, content(ORG, 1, overrides))).toThrow(message);
    }
    expect(() => chainNext(first, content(OTHER_ORG, 2))).toThrow(/organization_id differs/);
  });

  it('accepts the actors and nulls the format allows', () => {
    const ok: Array<Partial<AuditRecordContent>> = [
      { actor: { kind: 'system', id: null }, api_key_id: null, client_address: null },
      { actor: { kind: 'api_key', id: KEY }, client_address: '2001:db8::1' },
      { actor: { kind: 'user', id: null }, type: 'login.failed', data: { email: 'someone@example.com' } },
      { type: 'refresh_token.reuse_detected', data: { session_ids: [newId('ses'), newId('ses')], sessions_ended: 2 } },
    ];
    for (const overrides of ok) expect(verifyChain([chainNext(null, content(ORG, 1, overrides))]).ok).toBe(true);
  });
});

type AuditChainTailLike = Parameters<typeof chainNext>[0];

describe('verifyChain', () => {
  const chain = buildChain(ORG, 10);

  it('accepts an intact chain of 1000 records and reports its head', () => {
    const long = buildChain(ORG, 1000);
    expect(verifyChain(copy(long), { organizationId: ORG })).toEqual({ ok: true, count: 1000, head: { seq: 1000, hash: long[999].hash } });
  });

  it('accepts an empty chain', () => {
    expect(verifyChain([])).toEqual({ ok: true, count: 0, head: { seq: 0, hash: GENESIS_HASH } });
  });

  it('accepts records whose data comes back from jsonb with its keys in another order', () => {
    const fromJsonb = copy(chain).map((r) => ({ ...r, data: jsonbOrder(r.data), actor: { id: r.actor.id, kind: r.actor.kind } }) as StoredAuditRecord);
    expect(Object.keys(fromJsonb[0].data)).not.toEqual(Object.keys(chain[0].data));
    expect(verifyChain(fromJsonb).ok).toBe(true);
  });

  it.each<[string, (r: StoredAuditRecord) => void]>([
    ['data', (r) => (r.data.overlap_seconds = 0)],
    ['a nested value', (r) => ((r.data.allowed_ips as string[])[0] = '0.0.0.0/0')],
    ['an added data key', (r) => (r.data.extra = true)],
    ['type', (r) => (r.type = 'key.created')],
    ['occurred_at', (r) => (r.occurred_at = '2030-01-01T00:00:00.000Z')],
    ['actor', (r) => (r.actor = { kind: 'system', id: null })],
    ['api_key_id', (r) => (r.api_key_id = null)],
    ['client_address', (r) => (r.client_address = '198.51.100.1')],
    ['id', (r) => (r.id = newId('evt'))],
    ['hash', (r) => (r.hash = 'f'.repeat(64))],
  ])('names a record whose %s was changed as altered', (_field, alter) => {
    const records = copy(chain);
    alter(records[4]);
    const result = verifyChain(records);
    expect(result).toMatchObject({ ok: false, problem: 'altered', at: { seq: 5, id: records[4].id } });
  });

  it('names a record whose content can no longer be canonicalized as altered', () => {
    const records = copy(chain);
    records[2].data.n = NaN;
    expect(verifyChain(records)).toMatchObject({ ok: false, problem: 'altered', at: { seq: 3 } });
    const noActor = copy(chain);
    (noActor[2] as { actor: unknown }).actor = null;
    expect(verifyChain(noActor)).toMatchObject({ ok: false, problem: 'altered', at: { seq: 3 } });
  });

  it('names the record after a removed middle record, saying which seq is missing', () => {
    const records = copy(chain);
    records.splice(4, 1);
    const result = verifyChain(records);
    expect(result).toMatchObject({ ok: false, problem: 'removed_or_reordered', at: { seq: 6, id: chain[5].id } });
    expect(!result.ok && result.detail).toContain('seq 5 is missing');
    const two = copy(chain);
    two.splice(4, 2);
    expect(!verifyChain(two).ok && (verifyChain(two) as { detail: string }).detail).toContain('seqs 5 to 6 are missing');
  });

  it('notices a removed first record', () => {
    expect(verifyChain(copy(chain).slice(1))).toMatchObject({ ok: false, problem: 'removed_or_reordered', at: { seq: 2 } });
  });

  it('names the first of two swapped records as reordered', () => {
    const records = copy(chain);
    [records[3], records[6]] = [records[6], records[3]];
    expect(verifyChain(records)).toMatchObject({ ok: false, problem: 'removed_or_reordered', at: { seq: 7, id: chain[6].id } });
    const duplicated = copy(chain);
    duplicated.splice(5, 0, duplicated[2]);
    expect(verifyChain(duplicated)).toMatchObject({ ok: false, problem: 'removed_or_reordered', at: { seq: 3 } });
  });

  it('names a record whose prev_hash was changed as a broken link', () => {
    const records = copy(chain);
    records[6].prev_hash = 'a'.repeat(64);
    expect(verifyChain(records)).toMatchObject({ ok: false, problem: 'broken_link', at: { seq: 7, id: chain[6].id } });
  });

  it('names the next record as a broken link when one was altered and its own hash recomputed', () => {
    const records = copy(chain);
    records[3].data.overlap_seconds = 0;
    records[3].hash = auditRecordHash(records[3].prev_hash, records[3]);
    expect(verifyChain(records)).toMatchObject({ ok: false, problem: 'broken_link', at: { seq: 5, id: chain[4].id } });
  });

  it('names a record of another organization, even one that is well formed in its own chain', () => {
    const records = copy(chain);
    records[4] = copy(buildChain(OTHER_ORG, 5))[4];
    expect(verifyChain(records)).toMatchObject({ ok: false, problem: 'wrong_organization', at: { seq: 5, id: records[4].id } });
    expect(verifyChain(copy(chain), { organizationId: OTHER_ORG })).toMatchObject({ ok: false, problem: 'wrong_organization', at: { seq: 1 } });
    // Relabelling it as this organization's and relinking it changes its content.
    const relabelled = copy(chain);
    relabelled[4] = { ...copy(buildChain(OTHER_ORG, 5))[4], organization_id: ORG, prev_hash: chain[3].hash };
    expect(verifyChain(relabelled)).toMatchObject({ ok: false, problem: 'altered', at: { seq: 5 } });
  });

  it('names only the first of several problems', () => {
    const records = copy(chain);
    records[7].type = 'key.created';
    records[2].type = 'key.created';
    records.splice(5, 1);
    expect(verifyChain(records)).toMatchObject({ ok: false, problem: 'altered', at: { seq: 3 } });
  });

  it('reports a bigint seq read as a string for what it is', () => {
    const records = copy(chain).map((r) => ({ ...r, seq: String(r.seq) as unknown as number }));
    const result = verifyChain(records);
    expect(result).toMatchObject({ ok: false, problem: 'removed_or_reordered', at: { seq: 1 } });
    expect(!result.ok && result.detail).toContain('bigint');
  });

  it('stops reading at the first failure', () => {
    const records = copy(chain);
    records[1].type = 'key.created';
    let read = 0;
    function* source() {
      for (const r of records) {
        read++;
        yield r;
      }
    }
    expect(verifyChain(source()).ok).toBe(false);
    expect(read).toBe(2);
  });

  describe('with an anchor kept outside the database', () => {
    it('accepts the chain that passes through it', () => {
      expect(verifyChain(copy(chain), { anchor: { seq: 8, hash: chain[7].hash } }).ok).toBe(true);
      expect(verifyChain(copy(chain), { anchor: { seq: 10, hash: chain[9].hash } }).ok).toBe(true);
    });

    it('notices a truncated tail that alone verifies', () => {
      const truncated = copy(chain).slice(0, 7);
      expect(verifyChain(truncated).ok).toBe(true);
      expect(verifyChain(truncated, { anchor: { seq: 9, hash: chain[8].hash } })).toMatchObject({
        ok: false,
        problem: 'removed_or_reordered',
        at: { seq: 8, id: null },
      });
    });

    it('notices a chain rewritten from a point onwards that alone verifies', () => {
      const rewritten = copy(chain).slice(0, 3);
      for (let seq = 4; seq <= 10; seq++) rewritten.push(chainNext(rewritten[seq - 2], content(ORG, seq, { type: 'key.created' })));
      expect(verifyChain(rewritten).ok).toBe(true);
      expect(verifyChain(rewritten, { anchor: { seq: 6, hash: chain[5].hash } })).toMatchObject({ ok: false, problem: 'anchor_mismatch', at: { seq: 6 } });
    });

    it('refuses a malformed anchor', () => {
      expect(() => new AuditChainVerifier({ anchor: { seq: -1, hash: GENESIS_HASH } })).toThrow(AuditRecordError);
      expect(() => new AuditChainVerifier({ anchor: { seq: 1, hash: 'x' } })).toThrow(AuditRecordError);
      expect(() => new AuditChainVerifier({ anchor: { seq: 0, hash: 'f'.repeat(64) } })).toThrow(AuditRecordError);
    });
  });
});

describe('verifyChainAsync', () => {
  const chain = buildChain(ORG, 50);

  /** Keyset pages of 7, as the command would read them from Postgres. */
  async function* pages(records: StoredAuditRecord[], onPage: () => void = () => undefined) {
    for (let i = 0; i < records.length; i += 7) {
      onPage();
      await Promise.resolve();
      yield* records.slice(i, i + 7);
    }
  }

  it('gives the same answers as verifyChain', async () => {
    expect(await verifyChainAsync(pages(copy(chain)), { organizationId: ORG })).toEqual(verifyChain(copy(chain)));
    const records = copy(chain);
    records[20].data.n = 0;
    expect(await verifyChainAsync(pages(records))).toEqual(verifyChain(records));
    expect(await verifyChainAsync(copy(chain))).toMatchObject({ ok: true, count: 50 });
  });

  it('stops paging at the first failure', async () => {
    const records = copy(chain);
    records[3].prev_hash = GENESIS_HASH;
    let fetched = 0;
    expect(await verifyChainAsync(pages(records, () => fetched++))).toMatchObject({ ok: false, problem: 'broken_link', at: { seq: 4 } });
    expect(fetched).toBe(1);
  });
});

describe('assertNoSecrets', () => {
  it('refuses every secret shape, anywhere, without repeating the secret', () => {
    const secret = newSecretKey();
    const refresh = newRefreshToken();
    const jwt = jwtShaped();
    const basic = Buffer.from(`${newClientId()}:${secret}`).toString('base64');
    const cases: Array<[unknown, RegExp]> = [
      [{ secret }, /data\.secret looks like a Secret Key/],
      [{ refresh_token: refresh }, /looks like a refresh token/],
      [{ token: jwt }, /looks like a JWT/],
      [{ header: `Bearer ${jwt}` }, /looks like a JWT/],
      [{ header: `Basic ${basic}` }, /looks like a base64-encoded credential/],
      [{ encoded: Buffer.from(refresh).toString('base64url') }, /base64-encoded credential/],
      [{ note: `client sent ${secret.slice(0, 20)}` }, /Secret Key/],
      [{ deep: { list: [1, { x: [secret] }] } }, /data\.deep\.list\[1\]\.x\[0\]/],
      [{ [secret]: true }, /data\[key\] \(the key\) looks like a Secret Key/],
      [secret, /^data looks like/],
    ];
    for (const [data, message] of cases) {
      let error: unknown;
      try {
        assertNoSecrets(data);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AuditRecordError);
      expect((error as Error).message).toMatch(message);
      for (const s of [secret, refresh, jwt, basic, secret.slice(0, 20)]) expect((error as Error).message).not.toContain(s);
    }
  });

  it('accepts ordinary audit data', () => {
    expect(() =>
      assertNoSecrets({
        client_id: newClientId(),
        api_key_id: KEY,
        session_ids: [newId('ses')],
        email: 'ops@example.com',
        allowed_ips: ['10.0.0.0/8', '2001:db8::/32'],
        reason: 'skeleton key rolled; see sk_live_ prefix documentation',
        secret_hash: 'a'.repeat(64),
        expires_at: '2025-01-01T00:00:00.000Z',
        count: 3,
        flags: [true, null],
      }),
    ).not.toThrow();
  });
});

describe('redactSecrets', () => {
  it('replaces every secret-shaped string value, at any depth, and keeps the rest', () => {
    const { redactSecrets } = jest.requireActual<typeof import('./audit-chain')>('./audit-chain');
    const secret = `sk_live_${'a'.repeat(43)}`;
    expect(redactSecrets({ url: `https://x/${secret}`, plain: 'https://github.com/a/b', n: 3, list: [secret, 'ok'], nested: { token: `rt_live_${'b'.repeat(43)}` } })).toEqual({
      url: '[redacted]',
      plain: 'https://github.com/a/b',
      n: 3,
      list: ['[redacted]', 'ok'],
      nested: { token: '[redacted]' },
    });
  });
});
