import { newId, parsePublicId, toPublicId } from './ids';

describe('ids', () => {
  it('round-trips a prefixed id to its uuid and back', () => {
    const id = newId('inv');
    expect(id).toMatch(/^inv_[0-9a-f]{32}$/);
    const uuid = parsePublicId('inv', id);
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(toPublicId('inv', uuid!)).toBe(id);
  });

  it('refuses an id of another type or a malformed one', () => {
    const id = newId('cli');
    expect(parsePublicId('inv', id)).toBeNull();
    expect(parsePublicId('cli', id.toUpperCase())).toBeNull();
    expect(parsePublicId('cli', `${id}0`)).toBeNull();
    expect(parsePublicId('cli', 42)).toBeNull();
  });

  it('sorts ids by creation time', () => {
    const ids = Array.from({ length: 50 }, () => newId('inv'));
    expect([...ids].sort()).toEqual(ids);
  });
});
