import { newIdempotencyKey } from './idempotency-key';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newIdempotencyKey', () => {
  it('uses crypto.randomUUID when the runtime has it', () => {
    const randomUUID = jest.fn(() => '9b2f6a4e-5a0c-4d7e-8f11-2c3d4e5f6a7b');
    expect(newIdempotencyKey({ randomUUID })).toBe('9b2f6a4e-5a0c-4d7e-8f11-2c3d4e5f6a7b');
    expect(randomUUID).toHaveBeenCalledTimes(1);
  });

  it('builds a v4 UUID from crypto.getRandomValues without randomUUID (insecure browser contexts)', () => {
    const getRandomValues = jest.fn(<T extends Uint8Array>(bytes: T): T => {
      bytes.fill(0xff);
      return bytes;
    });
    expect(newIdempotencyKey({ getRandomValues })).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
    expect(getRandomValues).toHaveBeenCalledTimes(1);
  });

  it('falls back to Math.random without Web Crypto', () => {
    const random = jest.spyOn(Math, 'random');
    try {
      const key = newIdempotencyKey({});
      expect(key).toMatch(UUID_V4);
      expect(random).toHaveBeenCalledTimes(16);
    } finally {
      random.mockRestore();
    }
  });

  it('by default uses the global crypto: distinct v4 UUIDs', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => newIdempotencyKey()));
    expect(keys.size).toBe(1000);
    for (const key of keys) expect(key).toMatch(UUID_V4);
  });
});
