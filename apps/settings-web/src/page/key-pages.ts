/**
 * The key list's pages (docs/api.md section 9), without DOM (unit-tested). The API lists live keys
 * unless asked for other statuses, newest first, a page at a time: the page walks every page of the
 * live keys, so none is ever left out, and shows revoked and expired keys on request, "Show more"
 * at a time.
 */

export type KeyStatus = 'active' | 'revoked' | 'expired';

export interface KeyListQuery {
  /** Default (absent): the live keys only. */
  status?: readonly KeyStatus[];
  limit?: number;
  startingAfter?: string | null;
}

export interface ListPage<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/** The largest page the API gives. */
export const LIVE_PAGE_SIZE = 100;
/** Revoked and expired keys come this many at a time. */
export const INACTIVE_PAGE_SIZE = 20;
export const INACTIVE_STATUSES: readonly KeyStatus[] = ['revoked', 'expired'];

/** `?status=revoked,expired&limit=20&starting_after=key_…`; '' when nothing is asked. */
export function keysQuery(query: KeyListQuery): string {
  const params = new URLSearchParams();
  if (query.status && query.status.length > 0) params.set('status', query.status.join(','));
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.startingAfter) params.set('starting_after', query.startingAfter);
  const text = params.toString();
  // A comma needs no escaping in a query; left as it is, the URL reads as the API documents it.
  return text ? `?${text.replace(/%2C/g, ',')}` : '';
}

/**
 * Every item of a list, page after page while `has_more`. A page that brings nothing new ends the
 * walk, so a server that kept answering `has_more` could not keep the page loading for ever.
 */
export async function allPages<T extends { id: string }>(fetchPage: (startingAfter: string | null) => Promise<ListPage<T>>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let after: string | null = null;
  for (;;) {
    const page = await fetchPage(after);
    const fresh = page.data.filter((item) => !seen.has(item.id));
    for (const item of fresh) {
      seen.add(item.id);
      items.push(item);
    }
    if (!page.has_more || fresh.length === 0) return items;
    after = page.data[page.data.length - 1].id;
  }
}
