/** Test support: an `Invoicing` wired to a `FakeApi` and a `FakeClock` (not exported from index.ts). */
import { Invoicing } from '../invoicing';
import type { InvoicingOptions } from '../options';
import { FakeApi, FakeClock } from './fake-api';

export const CLIENT_ID = 'ak_live_client';
export const CLIENT_SECRET = 'sk_live_secret';

export function testClient(options: Partial<InvoicingOptions> = {}, server = new FakeApi(), clock = new FakeClock()) {
  const api = new Invoicing({
    baseUrl: server.baseUrl,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    fetch: server.fetch,
    now: clock.now,
    sleep: clock.sleep,
    ...options,
  });
  return { api, server, clock };
}
