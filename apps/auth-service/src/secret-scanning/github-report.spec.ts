import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

import { newRefreshToken, newSecretKey } from '../keys/credential-format';
import {
  DEFAULT_GITHUB_REPORT_LIMITS,
  candidateTokens,
  classifyToken,
  labelResponse,
  parseGithubPublicKeys,
  parseGithubReport,
  verifyGithubSignature,
  type GithubReportItem,
} from './github-report';

/** Shaped like GitHub's identifiers (64 hex characters); the values are made up for the test. */
const KEY_ID = 'a'.repeat(64);
const OTHER_KEY_ID = 'b'.repeat(64);

/** A fresh P-256 pair per run, standing in for GitHub's signing key. */
const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

const pem = (key: KeyObject): string => key.export({ type: 'spki', format: 'pem' }).toString();

/** GitHub's keys document, as served by api.github.com/meta/public_keys/secret_scanning. */
function keysDocument(entries: Array<{ key_identifier: unknown; key: unknown; is_current?: boolean }>): string {
  return JSON.stringify({ public_keys: entries.map((e) => ({ is_current: true, ...e })) });
}

/** What GitHub does: ECDSA P-256 / SHA-256 over the raw body bytes, DER, base64. */
function signBody(body: Buffer, privateKey: KeyObject = github.privateKey): string {
  return sign('sha256', body, { key: privateKey, dsaEncoding: 'der' }).toString('base64');
}

const keys = parseGithubPublicKeys(keysDocument([{ key_identifier: KEY_ID, key: pem(github.publicKey) }]));

/** The sample shape from GitHub's docs, with one of our secrets and one look-alike. */
function reportBody(tokens: string[]): Buffer {
  return Buffer.from(
    JSON.stringify(
      tokens.map((token) => ({
        token,
        type: 'acme_secret_key',
        url: 'https://github.com/octocat/Hello-World/blob/12345600b9cbe38a219f39a9941c9319b600c002/foo/bar.txt',
        source: 'content',
      })),
    ),
  );
}

/** A secret key with one character changed: right prefix and length, wrong checksum. */
function withTypo(secret: string): string {
  const i = 20;
  return secret.slice(0, i) + (secret[i] === 'a' ? 'b' : 'a') + secret.slice(i + 1);
}

describe('parseGithubPublicKeys', () => {
  it('maps every listed P-256 key by identifier, current or not (rotation overlap)', () => {
    const previous = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const parsed = parseGithubPublicKeys(
      keysDocument([
        { key_identifier: KEY_ID, key: pem(github.publicKey), is_current: true },
        { key_identifier: OTHER_KEY_ID, key: pem(previous.publicKey), is_current: false },
      ]),
    );
    expect([...parsed.keys()]).toEqual([KEY_ID, OTHER_KEY_ID]);
    expect(parsed.get(KEY_ID)?.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
  });

  it('refuses a P-384 key, naming the entry', () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
    expect(() => parseGithubPublicKeys(keysDocument([{ key_identifier: KEY_ID, key: pem(p384.publicKey) }]))).toThrow(
      /public_keys\[0\].*P-256.*secp384r1/,
    );
  });

  it('refuses other key types, private keys and junk', () => {
    const ed = generateKeyPairSync('ed25519');
    expect(() => parseGithubPublicKeys(keysDocument([{ key_identifier: KEY_ID, key: pem(ed.publicKey) }]))).toThrow(/P-256.*ed25519/);
    const privatePem = github.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(() => parseGithubPublicKeys(keysDocument([{ key_identifier: KEY_ID, key: privatePem }]))).toThrow(/BEGIN PUBLIC KEY/);
    const garbled = '-----BEGIN PUBLIC KEY-----\nnot base64 at all\n-----END PUBLIC KEY-----\n';
    expect(() => parseGithubPublicKeys(keysDocument([{ key_identifier: KEY_ID, key: garbled }]))).toThrow(/not a readable public key/);
  });

  it('refuses malformed documents with clear messages', () => {
    expect(() => parseGithubPublicKeys('{')).toThrow(/not valid JSON/);
    expect(() => parseGithubPublicKeys('[]')).toThrow(/"public_keys" array/);
    expect(() => parseGithubPublicKeys('null')).toThrow(/"public_keys" array/);
    expect(() => parseGithubPublicKeys('{"public_keys":[]}')).toThrow(/empty/);
    expect(() => parseGithubPublicKeys(keysDocument([{ key_identifier: '', key: pem(github.publicKey) }]))).toThrow(/key_identifier/);
    expect(() =>
      parseGithubPublicKeys(
        keysDocument([
          { key_identifier: KEY_ID, key: pem(github.publicKey) },
          { key_identifier: KEY_ID, key: pem(github.publicKey) },
        ]),
      ),
    ).toThrow(/duplicate/);
  });
});

describe('verifyGithubSignature', () => {
  const body = reportBody([newSecretKey()]);

  it('accepts a report signed over its raw bytes', () => {
    expect(verifyGithubSignature(keys, body, KEY_ID, signBody(body))).toEqual({ ok: true });
  });

  it('fails when a single body byte changes', () => {
    const signature = signBody(body);
    const tampered = Buffer.from(body);
    tampered[10] ^= 0x01;
    expect(verifyGithubSignature(keys, tampered, KEY_ID, signature)).toEqual({ ok: false, status: 401, reason: 'bad_signature' });
  });

  it('fails for a re-serialised body: the signature covers the exact bytes, not the JSON value', () => {
    const pretty = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 2));
    expect(verifyGithubSignature(keys, pretty, KEY_ID, signBody(body))).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('fails for a signature made with another key, even under a known identifier', () => {
    const impostor = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    expect(verifyGithubSignature(keys, body, KEY_ID, signBody(body, impostor.privateKey))).toMatchObject({
      ok: false,
      status: 401,
      reason: 'bad_signature',
    });
  });

  it('refuses an unknown key identifier', () => {
    expect(verifyGithubSignature(keys, body, OTHER_KEY_ID, signBody(body))).toEqual({ ok: false, status: 401, reason: 'unknown_key' });
    expect(verifyGithubSignature(keys, body, 'x'.repeat(10_000), signBody(body))).toMatchObject({ reason: 'unknown_key' });
  });

  it('refuses missing or empty headers with 400', () => {
    const missing = { ok: false, status: 400, reason: 'missing_signature' };
    expect(verifyGithubSignature(keys, body, undefined, signBody(body))).toEqual(missing);
    expect(verifyGithubSignature(keys, body, KEY_ID, undefined)).toEqual(missing);
    expect(verifyGithubSignature(keys, body, '', '')).toEqual(missing);
  });

  it('never throws on hostile signatures: non-base64, junk DER, raw r||s, oversized', () => {
    const p1363 = sign('sha256', body, { key: github.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64');
    for (const signature of ['not base64!', signBody(body).slice(0, -4), 'AAAA', Buffer.alloc(72, 0x30).toString('base64'), p1363, 'A'.repeat(4096)]) {
      expect(verifyGithubSignature(keys, body, KEY_ID, signature)).toEqual({ ok: false, status: 401, reason: 'bad_signature' });
    }
  });
});

describe('parseGithubReport', () => {
  it('reads the documented shape, defaulting url and source, ignoring extra fields', () => {
    const body = Buffer.from(
      '[{"token":"t1","type":"acme_secret_key","url":"https://github.com/o/r/blob/x/f","source":"commit","extra":1},' +
        '{"token":"t2","type":"acme_secret_key","__proto__":{"polluted":true}}]',
    );
    const parsed = parseGithubReport(body);
    expect(parsed).toEqual({
      ok: true,
      items: [
        { token: 't1', type: 'acme_secret_key', url: 'https://github.com/o/r/blob/x/f', source: 'commit' },
        { token: 't2', type: 'acme_secret_key', url: '', source: '' },
      ],
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('accepts an empty report', () => {
    expect(parseGithubReport(Buffer.from('[]'))).toEqual({ ok: true, items: [] });
  });

  it('refuses malformed JSON and invalid UTF-8 with 400', () => {
    for (const raw of [Buffer.from('[{"token":'), Buffer.from(''), Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d])]) {
      expect(parseGithubReport(raw)).toMatchObject({ ok: false, status: 400, reason: 'malformed_json' });
    }
  });

  it('refuses a body that is not an array', () => {
    expect(parseGithubReport(Buffer.from('{"token":"t","type":"x"}'))).toMatchObject({ ok: false, status: 400, reason: 'not_an_array' });
  });

  it('keeps every usable match when others are odd: entries without a token skipped, odd fields blanked or cut', () => {
    const secret = newSecretKey();
    const long = 'u'.repeat(DEFAULT_GITHUB_REPORT_LIMITS.maxFieldLength + 1);
    const parsed = parseGithubReport(
      Buffer.from(
        JSON.stringify([
          'just a string',
          null,
          { type: 'x' },
          { token: '', type: 'x' },
          { token: 1, type: 'x' },
          { token: 't' },
          { token: 't2', type: 'x', url: 5, source: {} },
          { token: secret, type: 'x', url: long },
          { token: secret + 'x'.repeat(DEFAULT_GITHUB_REPORT_LIMITS.maxTokenLength), type: 'x' },
        ]),
      ),
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.items.map((i) => [i.token.length, i.type, i.url.length, i.source])).toEqual([
      [1, '', 0, ''],
      [2, 'x', 0, ''],
      [secret.length, 'x', DEFAULT_GITHUB_REPORT_LIMITS.maxFieldLength, ''],
      [DEFAULT_GITHUB_REPORT_LIMITS.maxTokenLength, 'x', 0, ''],
    ]);
    // The over-long token is cut, so it cannot be one of ours: never a candidate.
    expect(candidateTokens(parsed.items)).toEqual([secret]);
  });

  it('refuses an oversized report with 413: too many matches, or too many bytes', () => {
    const limits = { ...DEFAULT_GITHUB_REPORT_LIMITS, maxEntries: 3, maxBodyBytes: 4096 };
    expect(parseGithubReport(reportBody(['a', 'b', 'c']), limits)).toMatchObject({ ok: true });
    expect(parseGithubReport(reportBody(['a', 'b', 'c', 'd']), limits)).toMatchObject({
      ok: false,
      status: 413,
      reason: 'too_many_entries',
    });
    expect(parseGithubReport(Buffer.alloc(4097, 0x20), limits)).toMatchObject({ ok: false, status: 413, reason: 'body_too_large' });

    const defaults = Array.from({ length: DEFAULT_GITHUB_REPORT_LIMITS.maxEntries + 1 }, () => ({ token: 't', type: 'x' }));
    expect(parseGithubReport(Buffer.from(JSON.stringify(defaults)))).toMatchObject({ status: 413, reason: 'too_many_entries' });
  });
});

describe('classifyToken', () => {
  it('calls a well-formed secret key a candidate for the store lookup', () => {
    expect(classifyToken(newSecretKey())).toBe('candidate');
  });

  it('calls a checksum-failing token not_ours, without any lookup', () => {
    expect(classifyToken(withTypo(newSecretKey()))).toBe('not_ours');
    expect(classifyToken(newSecretKey().slice(0, -1))).toBe('not_ours');
    expect(classifyToken('NMIfyYncKcRALEXAMPLE')).toBe('not_ours');
    // A valid credential of another kind is not a secret key either.
    expect(classifyToken(newRefreshToken())).toBe('not_ours');
  });
});

describe('labelResponse', () => {
  const item = (token: string): GithubReportItem => ({ token, type: 'acme_secret_key', url: '', source: 'content' });

  it('labels issued secrets true_positive and everything else false_positive, in report order', () => {
    const issued = newSecretKey();
    const neverIssued = newSecretKey();
    const typo = withTypo(issued);
    const items = [item(issued), item(neverIssued), item(typo), item(issued)];

    expect(candidateTokens(items)).toEqual([issued, neverIssued]);
    expect(labelResponse(items, new Set([issued]))).toEqual([
      { token_raw: issued, token_type: 'acme_secret_key', label: 'true_positive' },
      { token_raw: neverIssued, token_type: 'acme_secret_key', label: 'false_positive' },
      { token_raw: typo, token_type: 'acme_secret_key', label: 'false_positive' },
      { token_raw: issued, token_type: 'acme_secret_key', label: 'true_positive' },
    ]);
  });

  it('keeps a checksum-failing token false_positive even if the caller wrongly marks it issued', () => {
    const typo = withTypo(newSecretKey());
    expect(labelResponse([item(typo)], new Set([typo]))[0].label).toBe('false_positive');
  });

  it('goes end to end on a signed report: verify, parse, classify, label', () => {
    const issued = newSecretKey();
    const body = reportBody([issued, withTypo(issued)]);
    expect(verifyGithubSignature(keys, body, KEY_ID, signBody(body)).ok).toBe(true);
    const parsed = parseGithubReport(body);
    if (!parsed.ok) throw new Error(parsed.message);
    const store = new Set([issued]);
    const found = new Set(candidateTokens(parsed.items).filter((t) => store.has(t)));
    expect(labelResponse(parsed.items, found).map((e) => e.label)).toEqual(['true_positive', 'false_positive']);
  });
});
