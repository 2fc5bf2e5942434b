import { parseKeyRing } from './key-ring';

const secret = (fill: number, bytes = 32) => Buffer.alloc(bytes, fill).toString('base64url');

describe(parseKeyRing.name, () => {
  it('signs with the first kid unless told otherwise', () => {
    expect(parseKeyRing(`a=${secret(1)},b=${secret(2)}`).signingKid).toBe('a');
    expect(parseKeyRing(`a=${secret(1)},b=${secret(2)}`, 'b').signingKid).toBe('b');
  });

  it('refuses short keys, duplicate kids, a missing signing kid and an empty ring', () => {
    expect(() => parseKeyRing(`a=${secret(1, 31)}`)).toThrow(/at least 32/);
    expect(() => parseKeyRing(`a=${secret(1)},a=${secret(2)}`)).toThrow(/twice/);
    expect(() => parseKeyRing(`a=${secret(1)}`, 'z')).toThrow(/not in the key ring/);
    expect(() => parseKeyRing('')).toThrow(/empty/);
    expect(() => parseKeyRing(secret(1))).toThrow(/kid/);
  });

  it('never puts the secret in an error message', () => {
    const s = secret(7, 16);
    try {
      parseKeyRing(`a=${s}`);
    } catch (e) {
      expect((e as Error).message).not.toContain(s);
    }
  });
});
