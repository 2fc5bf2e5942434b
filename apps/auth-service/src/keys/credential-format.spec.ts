import {
  hashCredential,
  isWellFormedClientId,
  isWellFormedRefreshToken,
  isWellFormedSecretKey,
  newClientId,
  newRefreshToken,
  newSecretKey,
  sameHash,
} from './credential-format';

describe('credential formats', () => {
  it('mints prefixed credentials of the documented shape', () => {
    expect(newClientId()).toMatch(/^ak_live_[0-9A-Za-z]{24}$/);
    expect(newSecretKey()).toMatch(/^sk_live_[0-9A-Za-z]{49}$/);
    expect(newRefreshToken()).toMatch(/^rt_live_[0-9A-Za-z]{49}$/);
  });

  it('accepts what it mints and never repeats itself', () => {
    const secrets = new Set(Array.from({ length: 1000 }, newSecretKey));
    expect(secrets.size).toBe(1000);
    for (const s of secrets) expect(isWellFormedSecretKey(s)).toBe(true);
    expect(isWellFormedRefreshToken(newRefreshToken())).toBe(true);
    expect(isWellFormedClientId(newClientId())).toBe(true);
  });

  it('rejects a typo through the checksum, and credentials of another kind through the prefix', () => {
    const secret = newSecretKey();
    const i = 20;
    const typo = secret.slice(0, i) + (secret[i] === 'a' ? 'b' : 'a') + secret.slice(i + 1);
    expect(isWellFormedSecretKey(typo)).toBe(false);
    expect(isWellFormedSecretKey(secret.slice(0, -1))).toBe(false);
    expect(isWellFormedSecretKey(`rt_live_${secret.slice(8)}`)).toBe(false);
    expect(isWellFormedRefreshToken(secret)).toBe(false);
    expect(isWellFormedSecretKey(undefined)).toBe(false);
  });

  it('draws characters uniformly enough (no modulo bias towards the first symbols)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 20000; i++) for (const c of newSecretKey().slice(8, 51)) counts.set(c, (counts.get(c) ?? 0) + 1);
    const values = [...counts.values()];
    expect(counts.size).toBe(62);
    // 860,000 draws over 62 symbols: about 13,871 each (sd ~117), so min/max stays near 0.95 and
    // below 0.9 only at ~6 sd. `byte % 62` without rejection would give the first 8 symbols 5/4 of
    // the others' share: a ratio of 0.8. (2,000 secrets and 0.85 failed by chance now and then.)
    expect(Math.min(...values) / Math.max(...values)).toBeGreaterThan(0.9);
  });

  it('compares hashes in constant time and by value', () => {
    expect(sameHash(hashCredential('a'), hashCredential('a'))).toBe(true);
    expect(sameHash(hashCredential('a'), hashCredential('b'))).toBe(false);
    expect(sameHash(hashCredential('a'), Buffer.alloc(3))).toBe(false);
  });
});
