import { allPages, keysQuery, ListPage } from './key-pages';

type Key = { id: string };

/** A server holding `ids` (newest first) that answers pages of `size` after a cursor, as the API does. */
function server(ids: string[], size: number) {
  const asked: Array<string | null> = [];
  const fetchPage = async (after: string | null): Promise<ListPage<Key>> => {
    asked.push(after);
    const start = after === null ? 0 : ids.indexOf(after) + 1;
    const data = ids.slice(start, start + size).map((id) => ({ id }));
    return { object: 'list', data, has_more: start + size < ids.length };
  };
  return { asked, fetchPage };
}

describe('the key list pages', () => {
  it('asks for what the API documents: status comma-separated, limit, starting_after', () => {
    expect(keysQuery({})).toBe('');
    expect(keysQuery({ status: ['active'], limit: 100 })).toBe('?status=active&limit=100');
    expect(keysQuery({ status: ['revoked', 'expired'], limit: 20, startingAfter: 'key_1' })).toBe('?status=revoked,expired&limit=20&starting_after=key_1');
  });

  it('walks every page of the live keys, however many there are, following the cursor', async () => {
    const ids = Array.from({ length: 205 }, (_, i) => `key_${String(205 - i).padStart(3, '0')}`);
    const { asked, fetchPage } = server(ids, 100);
    expect((await allPages(fetchPage)).map((k) => k.id)).toEqual(ids);
    expect(asked).toEqual([null, ids[99], ids[199]]);
  });

  it('stops at a page that brings nothing new, whatever has_more says', async () => {
    let calls = 0;
    const stuck = async (): Promise<ListPage<Key>> => {
      calls += 1;
      return { object: 'list', data: [{ id: 'key_1' }], has_more: true };
    };
    expect(await allPages(stuck)).toEqual([{ id: 'key_1' }]);
    expect(calls).toBe(2);
    expect(await allPages(async () => ({ object: 'list', data: [], has_more: true }))).toEqual([]);
  });
});
