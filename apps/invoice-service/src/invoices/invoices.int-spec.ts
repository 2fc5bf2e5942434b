import { DOMAIN_EVENT_TYPES, INVOICE_BALANCE_CHANGED_TYPE, MONEY_MAX, newId, parsePublicId, validateDomainEvent } from '@invoicing/contracts';
import type { DataSource } from 'typeorm';
import { DEV_SERVICE_TOKEN_KEYS, DomainEventsConsumer, ReferenceResolver, ServiceCredentials } from '@invoicing/resource-api';
import { getDataSourceToken } from '@nestjs/typeorm';
import { parseKeyRing } from '@invoicing/auth-guard';
import { call, describeResourceContract, ResourceTestApp, startResourceTestApp } from '@invoicing/resource-api/testing';
import { INVOICE_SERVICE } from '../invoice-service.definition';

async function clientIn(app: ResourceTestApp, org: string): Promise<string> {
  const id = newId('cli');
  await app.remember('client', org, { id, name: 'Globex', created_at: new Date().toISOString() });
  return id;
}

const suite = describeResourceContract({
  definition: INVOICE_SERVICE,
  validBody: async (app, org, n) => ({
    client_id: await clientIn(app, org),
    currency: 'EUR',
    line_items: [{ description: `Work ${n}`, quantity: 2, unit_price: 5000, tax_rate_bps: 2000 }],
  }),
  invalid: {
    body: { client_id: 'cli_x', currency: 'eur', line_items: [], due_date: '2026-13-01' },
    fields: ['client_id', 'currency', 'line_items', 'due_date'],
  },
});

describe('invoices', () => {
  const url = (path = '') => `${suite.app().baseUrl}/api/v1/invoices${path}`;

  it('computes totals exactly and derives amount_due and status', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const r = await call('POST', url(), {
      token: app.token({ organizationPublicId: org }),
      body: {
        client_id: await clientIn(app, org),
        currency: 'EUR',
        issue_date: '2026-11-01',
        due_date: '2026-11-30',
        line_items: [
          { description: 'Consulting', quantity: 1.5, unit_price: 10001, tax_rate_bps: 2000 },
          { description: 'Hosting', quantity: '3', unit_price: 999, tax_rate_bps: 700 },
        ],
      },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      number: 'INV-000001',
      subtotal: 17999,
      tax_total: 3210,
      total: 21209,
      amount_paid: 0,
      amount_due: 21209,
      status: 'open',
      issue_date: '2026-11-01',
      due_date: '2026-11-30',
    });
  });

  it("numbers each organization on its own: one organization's held counter slows none of another's creates", async () => {
    const app = suite.app();
    const [held, other] = [app.newOrganizationPublicId(), app.newOrganizationPublicId()];
    const create = async (org: string) =>
      call('POST', url(), { token: app.token({ organizationPublicId: org }), body: { client_id: await clientIn(app, org), currency: 'EUR', line_items: [{ description: 'Work', quantity: 1, unit_price: 100 }] } });
    expect((await create(held)).status).toBe(201);
    // Another connection holds the first organization's counter row, as a create between its insert
    // and its commit does.
    const db = app.service.app.get<DataSource>(getDataSourceToken());
    const holder = db.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query('SELECT 1 FROM invoices.invoice_number_counters WHERE organization_id = $1 FOR UPDATE', [parsePublicId('org', held)]);
    let waiting: Promise<Awaited<ReturnType<typeof create>>>;
    try {
      waiting = create(held);
      const others = await Promise.all([create(other), create(other)]);
      expect(others.map((r) => r.status)).toEqual([201, 201]);
      expect(others.map((r) => (r.body as { number: string }).number).sort()).toEqual(['INV-000001', 'INV-000002']);
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
    // The held organization's create waited for the row, then took the next number.
    const after = await waiting;
    expect(after.status).toBe(201);
    expect((after.body as { number: string }).number).toBe('INV-000002');
  });

  it('gives 20 parallel creates 20 distinct sequential numbers', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const client = await clientIn(app, org);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        call('POST', url(), { token, body: { client_id: client, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 1 }] } }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const numbers = results.map((r) => r.body.number as string).sort();
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`));
  });

  it('refuses a duplicate explicit number with 409 and skips taken numbers in the sequence', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const body = { client_id: await clientIn(app, org), currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 1 }] };
    expect((await call('POST', url(), { token, body: { ...body, number: 'INV-000001' } })).status).toBe(201);
    const dup = await call('POST', url(), { token, body: { ...body, number: 'INV-000001' } });
    expect(dup.status).toBe(409);
    expect(dup.body.errors).toEqual([expect.objectContaining({ field: 'number', code: 'duplicate' })]);
    expect((await call('POST', url(), { token, body })).body.number).toBe('INV-000002');
  });

  it("refuses a client or product of another organization like an absent one (422 naming the field)", async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const other = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const foreignClient = await clientIn(app, other);
    const r = await call('POST', url(), { token, body: { client_id: foreignClient, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 1 }] } });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([{ field: 'client_id', code: 'not_found', message: 'no such client in this organization' }]);
    const foreignProduct = newId('prd');
    await app.remember('product', other, { id: foreignProduct, name: 'W', unit_price: 1, tax_rate_bps: 0, currency: 'EUR', created_at: new Date().toISOString() });
    const p = await call('POST', url(), {
      token,
      body: { client_id: await clientIn(app, org), currency: 'EUR', line_items: [{ quantity: 1, product_id: foreignProduct }] },
    });
    expect(p.status).toBe(422);
    expect(p.body.errors).toEqual([expect.objectContaining({ field: 'line_items[0].product_id', code: 'not_found' })]);
  });

  it('fills a line from its product, and refuses a product priced in another currency', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const product = newId('prd');
    await app.remember('product', org, { id: product, name: 'Widget', unit_price: 1250, tax_rate_bps: 1000, currency: 'EUR', created_at: new Date().toISOString() });
    const client = await clientIn(app, org);
    const r = await call('POST', url(), { token, body: { client_id: client, currency: 'EUR', line_items: [{ quantity: 3, product_id: product }] } });
    expect(r.status).toBe(201);
    expect((r.body.line_items as unknown[])[0]).toEqual({ description: 'Widget', quantity: 3, unit_price: 1250, tax_rate_bps: 1000, product_id: product, amount: 3750, tax: 375 });
    const usd = await call('POST', url(), { token, body: { client_id: client, currency: 'USD', line_items: [{ quantity: 1, product_id: product }] } });
    expect(usd.status).toBe(422);
    expect(usd.body.errors).toEqual([expect.objectContaining({ field: 'line_items[0].product_id', code: 'currency_mismatch' })]);
  });

  it('refuses a due date before the issue date and a quantity with 4 decimals', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const r = await call('POST', url(), {
      token: app.token({ organizationPublicId: org }),
      body: { client_id: await clientIn(app, org), currency: 'EUR', issue_date: '2026-11-10', due_date: '2026-11-09', line_items: [{ description: 'x', quantity: 1.0001, unit_price: 1 }] },
    });
    expect(r.status).toBe(422);
    expect((r.body.errors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual(['due_date', 'line_items[0].quantity']);
  });

  it('applies a payment event once (redelivery is a no-op) and filters by status and client', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const client = await clientIn(app, org);
    const created = await call('POST', url(), { token, body: { client_id: client, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 1000 }] } });
    const invoiceId = created.body.id as string;
    const payment = (amount: number, id = newId('pay')) => ({
      specversion: '1.0', id: newId('evt'), source: '/invoicing/payment-service', type: DOMAIN_EVENT_TYPES.payment, subject: id,
      time: new Date().toISOString(), datacontenttype: 'application/json',
      data: { organization_id: org, object: { object: 'payment', id, created_at: new Date().toISOString(), invoice_id: invoiceId, amount, currency: 'EUR', method: null, paid_at: new Date().toISOString(), reference: null } },
    });
    const consumer = app.service.app.get(DomainEventsConsumer);
    const deliver = (event: unknown) => consumer.handle({ topic: 't', partition: 0, offset: '0', key: null, value: Buffer.from(JSON.stringify(event)), timestamp: Date.now() });
    const first = payment(400);
    await deliver(first);
    await deliver(first);
    let invoice = (await call('GET', url(`/${invoiceId}`), { token })).body;
    expect(invoice).toMatchObject({ amount_paid: 400, amount_due: 600, status: 'partially_paid' });
    await deliver(payment(700));
    invoice = (await call('GET', url(`/${invoiceId}`), { token })).body;
    expect(invoice).toMatchObject({ amount_paid: 1100, amount_due: 0, status: 'paid' });

    // Each change of the balance is announced with the invoice as it now reads and its balance
    // before, in the transaction that applied it (the outbox): two changes, the redelivery none.
    const announced: Array<{ payload: unknown }> = await app.service.app.get<DataSource>(getDataSourceToken()).query(
      `SELECT payload FROM invoices.outbox WHERE message_key = $1 AND payload->>'type' = $2 ORDER BY id`,
      [invoiceId, INVOICE_BALANCE_CHANGED_TYPE],
    );
    expect(announced.map(({ payload }) => validateDomainEvent(payload).ok)).toEqual([true, true]);
    expect(announced.map(({ payload }) => (payload as { data: unknown }).data)).toEqual([
      { organization_id: org, object: expect.objectContaining({ id: invoiceId, amount_paid: 400, status: 'partially_paid' }), previous: { amount_paid: 0, status: 'open' } },
      { organization_id: org, object: { ...invoice, amount_paid: 1100 }, previous: { amount_paid: 400, status: 'partially_paid' } },
    ]);

    const paid = await call('GET', url('?status=paid'), { token });
    expect((paid.body.data as Array<{ id: string }>).map((i) => i.id)).toEqual([invoiceId]);
    expect((await call('GET', url('?status=open'), { token })).body.data).toEqual([]);
    expect((await call('GET', url(`?client_id=${client}`), { token })).body.data).toHaveLength(1);
    expect((await call('GET', url(`?client_id=${newId('cli')}`), { token })).body.data).toEqual([]);
    expect((await call('GET', url('?status=void'), { token })).status).toBe(400);
  });
});

describe('payments applied in batches', () => {
  const url = (path = '') => `${suite.app().baseUrl}/api/v1/invoices${path}`;

  it('applies a batch of payment events in one transaction, each once (a redelivered batch changes nothing), skipping what it cannot read', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const client = await clientIn(app, org);
    const invoices = await Promise.all(
      [1000, 2000].map(async (unit_price) => (await call('POST', url(), { token, body: { client_id: client, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price }] } })).body.id as string),
    );
    const payment = (invoiceId: string, amount: number) => {
      const id = newId('pay');
      return {
        specversion: '1.0', id: newId('evt'), source: '/invoicing/payment-service', type: DOMAIN_EVENT_TYPES.payment, subject: id,
        time: new Date().toISOString(), datacontenttype: 'application/json',
        data: { organization_id: org, object: { object: 'payment', id, created_at: new Date().toISOString(), invoice_id: invoiceId, amount, currency: 'EUR', method: null, paid_at: new Date().toISOString(), reference: null } },
      };
    };
    const events = [...Array.from({ length: 10 }, () => payment(invoices[0], 100)), 'not json', ...Array.from({ length: 4 }, () => payment(invoices[1], 250))];
    // Untraced messages (no raw Kafka message): the reaction runs without a span.
    const batch = events.map((event, i) => ({
      topic: 't', partition: 0, offset: String(i), key: null, timestamp: Date.now(),
      value: Buffer.from(typeof event === 'string' ? event : JSON.stringify(event)),
      process: <T>(work: () => Promise<T>) => work(),
      raw: null as never,
      groupId: 'spec',
    }));
    const consumer = app.service.app.get(DomainEventsConsumer);
    await consumer.handleBatch(batch);
    await consumer.handleBatch(batch);
    const read = async (id: string) => (await call('GET', url(`/${id}`), { token })).body;
    expect(await read(invoices[0])).toMatchObject({ amount_paid: 1000, status: 'paid' });
    expect(await read(invoices[1])).toMatchObject({ amount_paid: 1000, amount_due: 1000, status: 'partially_paid' });
  });
});

describe('payments applied by two instances at once', () => {
  const url = (path = '') => `${suite.app().baseUrl}/api/v1/invoices${path}`;

  it('never deadlocks: two instances applying batches that pay the same invoices in opposite orders both commit, first time', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const client = await clientIn(app, org);
    // Enough invoices that the two batches' updates overlap in time.
    const invoices: string[] = [];
    for (let i = 0; i < 150; i++) {
      invoices.push((await call('POST', url(), { token, body: { client_id: client, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 100000 }] } })).body.id as string);
    }
    const message = (invoiceId: string, offset: number) => {
      const id = newId('pay');
      const event = {
        specversion: '1.0', id: newId('evt'), source: '/invoicing/payment-service', type: DOMAIN_EVENT_TYPES.payment, subject: id,
        time: new Date().toISOString(), datacontenttype: 'application/json',
        data: { organization_id: org, object: { object: 'payment', id, created_at: new Date().toISOString(), invoice_id: invoiceId, amount: 1, currency: 'EUR', method: null, paid_at: new Date().toISOString(), reference: null } },
      };
      return { topic: 't', partition: 0, offset: String(offset), key: null, timestamp: Date.now(), value: Buffer.from(JSON.stringify(event)), process: <T>(work: () => Promise<T>) => work(), raw: null as never, groupId: 'spec' };
    };
    const first = app.service.app.get(DomainEventsConsumer);
    // A second instance's consumer: the same definition and database, its own transactions.
    const second = new DomainEventsConsumer(INVOICE_SERVICE.resource, app.service.app.get(getDataSourceToken()), app.service.app.get(ReferenceResolver), { subscribe: () => ({}) } as never, { service: 'spec', maxWaitTimeInMs: 100 });
    const retried: unknown[] = [];
    for (const consumer of [first, second]) {
      const logger = (consumer as unknown as { logger: { warn(entry: unknown): void } }).logger;
      jest.spyOn(logger, 'warn').mockImplementation((entry) => void retried.push(entry));
    }
    for (let round = 0; round < 10; round++) {
      await Promise.all([
        first.handleBatch(invoices.map((invoice, i) => message(invoice, i))),
        second.handleBatch([...invoices].reverse().map((invoice, i) => message(invoice, i))),
      ]);
    }
    expect(retried).toEqual([]);
    for (const invoice of invoices.slice(0, 5)) expect((await call('GET', url(`/${invoice}`), { token })).body.amount_paid).toBe(20);
  });
});

describe('money within its range', () => {
  const url = (path = '') => `${suite.app().baseUrl}/api/v1/invoices${path}`;

  it('refuses an invoice whose total would pass 10^12 (422 naming line_items)', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const client = await clientIn(app, org);
    const line = { description: 'x', quantity: 1, unit_price: MONEY_MAX / 2 };
    expect((await call('POST', url(), { token, body: { client_id: client, currency: 'EUR', line_items: [line, line] } })).status).toBe(201);
    const over = await call('POST', url(), { token, body: { client_id: client, currency: 'EUR', line_items: [line, line, { ...line, unit_price: 1 }] } });
    expect(over.status).toBe(422);
    expect(over.body.errors).toEqual([expect.objectContaining({ field: 'line_items', code: 'out_of_range' })]);
  });

  it('keeps amount_paid within the range whatever payment events arrive, and the invoice readable', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const created = await call('POST', url(), { token, body: { client_id: await clientIn(app, org), currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 1000 }] } });
    const invoiceId = created.body.id as string;
    const consumer = app.service.app.get(DomainEventsConsumer);
    // Events past the range can only come from a payment service that did not check it (an older
    // version): the consumer must neither throw (its partition would stop) nor store an unreadable sum.
    for (let i = 0; i < 12; i++) {
      const id = newId('pay');
      const event = {
        specversion: '1.0', id: newId('evt'), source: '/invoicing/payment-service', type: DOMAIN_EVENT_TYPES.payment, subject: id,
        time: new Date().toISOString(), datacontenttype: 'application/json',
        data: { organization_id: org, object: { object: 'payment', id, created_at: new Date().toISOString(), invoice_id: invoiceId, amount: MONEY_MAX, currency: 'EUR', method: null, paid_at: new Date().toISOString(), reference: null } },
      };
      await consumer.handle({ topic: 't', partition: 0, offset: String(i), key: null, value: Buffer.from(JSON.stringify(event)), timestamp: Date.now() });
    }
    const read = await call('GET', url(`/${invoiceId}`), { token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ amount_paid: MONEY_MAX, amount_due: 0, status: 'paid' });
    expect((await call('GET', url(), { token })).status).toBe(200);
  });
});

describe('references not yet in the read model', () => {
  const url = () => `${suite.app().baseUrl}/api/v1/invoices`;

  it("asks the owner with a service credential naming the caller's organization (never the caller's token), uses its answer and remembers it", async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const client = newId('cli');
    suite.owner().objects.set(client, { object: 'client', id: client, name: 'Just created', created_at: new Date().toISOString() });
    const asked = suite.owner().authorizations.length;
    const body = { client_id: client, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 1 }] };
    expect((await call('POST', url(), { token, body })).status).toBe(201);
    const sent = suite.owner().authorizations.slice(asked);
    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toContain(token);
    const credential = sent[0].replace(/^Bearer /, '');
    const accepted = new ServiceCredentials(parseKeyRing(DEV_SERVICE_TOKEN_KEYS), 'client-service', new Set(['invoice-service'])).verify(credential);
    expect(accepted).toMatchObject({ service: 'invoice-service', organizationPublicId: org });
    // Remembered: the owner is not asked again.
    expect((await call('POST', url(), { token, body })).status).toBe(201);
    expect(suite.owner().authorizations.length).toBe(asked + 1);
  });
});

describe('references when the owner is unreachable', () => {
  it('answers 503, not a wrong 422', async () => {
    const app = await startResourceTestApp(INVOICE_SERVICE, { CLIENT_SERVICE_URL: 'http://127.0.0.1:9', PRODUCT_SERVICE_URL: 'http://127.0.0.1:9' });
    try {
      const r = await call('POST', `${app.baseUrl}/api/v1/invoices`, {
        token: app.token(),
        body: { client_id: newId('cli'), currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 1 }] },
      });
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('1');
    } finally {
      await app.close();
    }
  });
});
