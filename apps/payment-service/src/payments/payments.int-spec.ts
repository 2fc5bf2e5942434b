import { MONEY_MAX, newId } from '@invoicing/contracts';
import { call, describeResourceContract, ResourceTestApp } from '@invoicing/resource-api/testing';
import { PAYMENT_SERVICE } from '../payment-service.definition';

async function invoiceIn(app: ResourceTestApp, org: string, currency = 'EUR'): Promise<string> {
  const id = newId('inv');
  await app.remember('invoice', org, { id, currency, created_at: new Date().toISOString() });
  return id;
}

const suite = describeResourceContract({
  definition: PAYMENT_SERVICE,
  validBody: async (app, org, n) => ({ invoice_id: await invoiceIn(app, org), amount: 1000 + n, currency: 'EUR', method: 'bank_transfer', reference: `R-${n}` }),
  invalid: { body: { invoice_id: 'inv_x', amount: 0, currency: 'EUR', method: 'barter' }, fields: ['invoice_id', 'amount', 'method'] },
});

describe('payments', () => {
  const url = () => `${suite.app().baseUrl}/api/v1/payments`;

  it("refuses an invoice of another organization exactly like an absent one (422 naming invoice_id)", async () => {
    const app = suite.app();
    const foreignInvoice = await invoiceIn(app, app.newOrganizationPublicId());
    const token = app.token({ organizationPublicId: app.newOrganizationPublicId() });
    const foreign = await call('POST', url(), { token, body: { invoice_id: foreignInvoice, amount: 100, currency: 'EUR' } });
    const absent = await call('POST', url(), { token, body: { invoice_id: newId('inv'), amount: 100, currency: 'EUR' } });
    for (const r of [foreign, absent]) {
      expect(r.status).toBe(422);
      expect(r.body.errors).toEqual([{ field: 'invoice_id', code: 'not_found', message: 'no such invoice in this organization' }]);
    }
  });

  it("requires the invoice's currency", async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const r = await call('POST', url(), { token: app.token({ organizationPublicId: org }), body: { invoice_id: await invoiceIn(app, org, 'USD'), amount: 100, currency: 'EUR' } });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([expect.objectContaining({ field: 'currency', code: 'currency_mismatch' })]);
  });

  it('filters by invoice_id and defaults paid_at to now', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const a = await invoiceIn(app, org);
    const b = await invoiceIn(app, org);
    const before = Date.now();
    const created = await call('POST', url(), { token, body: { invoice_id: a, amount: 5, currency: 'EUR' } });
    expect(Date.parse(created.body.paid_at as string)).toBeGreaterThanOrEqual(before - 1000);
    await call('POST', url(), { token, body: { invoice_id: b, amount: 7, currency: 'EUR', paid_at: '2026-01-02T03:04:05.000Z' } });
    const filtered = await call('GET', `${url()}?invoice_id=${a}`, { token });
    expect((filtered.body.data as Array<{ invoice_id: string }>).map((p) => p.invoice_id)).toEqual([a]);
    expect((await call('GET', `${url()}?invoice_id=nope`, { token })).status).toBe(400);
  });

  it("refuses, with 422 and nothing recorded, a payment that would take its invoice's payments past 10^12; overpayment below that is accepted", async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const invoice = await invoiceIn(app, org);
    // Two payments of the largest amount would have been accepted one after the other before.
    expect((await call('POST', url(), { token, body: { invoice_id: invoice, amount: MONEY_MAX - 1, currency: 'EUR' } })).status).toBe(201);
    expect((await call('POST', url(), { token, body: { invoice_id: invoice, amount: 1, currency: 'EUR' } })).status).toBe(201);
    const past = await call('POST', url(), { token, body: { invoice_id: invoice, amount: 1, currency: 'EUR' }, headers: { 'idempotency-key': `past-${invoice}` } });
    expect(past.status).toBe(422);
    expect(past.body.errors).toEqual([{ field: 'amount', code: 'out_of_range', message: expect.stringContaining('more than 1000000000000') }]);
    const listed = await call('GET', `${url()}?invoice_id=${invoice}`, { token });
    expect((listed.body.data as Array<{ amount: number }>).map((p) => p.amount)).toEqual([1, MONEY_MAX - 1]);
    // Another invoice of the organization has a range of its own.
    expect((await call('POST', url(), { token, body: { invoice_id: await invoiceIn(app, org), amount: MONEY_MAX, currency: 'EUR' } })).status).toBe(201);
  });

  it('lets exactly as many concurrent payments of one invoice through as the range holds', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const invoice = await invoiceIn(app, org);
    const quarter = MONEY_MAX / 4;
    const results = await Promise.all(Array.from({ length: 8 }, () => call('POST', url(), { token, body: { invoice_id: invoice, amount: quarter, currency: 'EUR' } })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 422, 422, 422, 422]);
  });

  it('stores a failure found while working (an absent invoice) under its Idempotency-Key: the same key replays it, even once the invoice exists', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const invoice = newId('inv');
    const body = { invoice_id: invoice, amount: 100, currency: 'EUR' };
    const first = await call('POST', url(), { token, body, headers: { 'idempotency-key': 'fail-1' } });
    expect(first.status).toBe(422);
    await app.remember('invoice', org, { id: invoice, currency: 'EUR', created_at: new Date().toISOString() });
    const again = await call('POST', url(), { token, body, headers: { 'idempotency-key': 'fail-1' } });
    expect(again.status).toBe(422);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.errors).toEqual(first.body.errors);
    // A new key runs the create again, and now the invoice is there.
    expect((await call('POST', url(), { token, body, headers: { 'idempotency-key': 'fail-2' } })).status).toBe(201);
    expect((await call('GET', `${url()}?invoice_id=${invoice}`, { token })).body.data).toHaveLength(1);
  });
});
