import { call, describeResourceContract } from '@invoicing/resource-api/testing';
import { PRODUCT_SERVICE } from '../product-service.definition';

const suite = describeResourceContract({
  definition: PRODUCT_SERVICE,
  validBody: async (_app, _org, n) => ({ name: `Widget ${n}`, sku: `W-${n}-${Math.random()}`, unit_price: 1250, currency: 'EUR', tax_rate_bps: 2000 }),
  invalid: { body: { unit_price: -1, currency: 'EURO', tax_rate_bps: 10001 }, fields: ['name', 'unit_price', 'currency', 'tax_rate_bps'] },
});

describe('products', () => {
  it('refuses a duplicate SKU in one organization with 409, but not across organizations', async () => {
    const app = suite.app();
    const org = app.newOrganizationPublicId();
    const token = app.token({ organizationPublicId: org });
    const body = { name: 'Widget', sku: 'W-1', unit_price: 100, currency: 'EUR' };
    expect((await call('POST', `${app.baseUrl}/api/v1/products`, { token, body })).status).toBe(201);
    const dup = await call('POST', `${app.baseUrl}/api/v1/products`, { token, body });
    expect(dup.status).toBe(409);
    expect(dup.body.errors).toEqual([expect.objectContaining({ field: 'sku', code: 'duplicate' })]);
    const elsewhere = app.token({ organizationPublicId: app.newOrganizationPublicId() });
    expect((await call('POST', `${app.baseUrl}/api/v1/products`, { token: elsewhere, body })).status).toBe(201);
  });

  it('defaults tax_rate_bps to 0 and keeps prices as integers', async () => {
    const app = suite.app();
    const r = await call('POST', `${app.baseUrl}/api/v1/products`, { token: app.token(), body: { name: 'Free', unit_price: 0, currency: 'USD' } });
    expect(r.body).toMatchObject({ unit_price: 0, tax_rate_bps: 0, sku: null, description: null });
  });

  it('takes look-alikes of a SKU for the same SKU (409), stores the normalized form, and refuses invisible characters (422)', async () => {
    const app = suite.app();
    const token = app.token({ organizationPublicId: app.newOrganizationPublicId() });
    const create = (sku: string) => call('POST', `${app.baseUrl}/api/v1/products`, { token, body: { name: 'Coffee', sku, unit_price: 100, currency: 'EUR' } });
    const first = await create('CAF\u00c9-1');
    expect(first.status).toBe(201);
    expect(first.body.sku).toBe('CAF\u00c9-1');
    const lookAlikes = {
      'NFD (E and a combining acute)': 'CAFE\u0301-1',
      fullwidth: '\uff23\uff21\uff26\uff25\u0301\uff0d\uff11',
      'a trailing space': 'CAF\u00c9-1 ',
      'a leading no-break space': '\u00a0CAF\u00c9-1',
    };
    for (const [name, sku] of Object.entries(lookAlikes)) {
      const r = await create(sku);
      expect({ name, status: r.status, errors: r.body.errors }).toEqual({ name, status: 409, errors: [expect.objectContaining({ field: 'sku', code: 'duplicate' })] });
    }
    const invisible = {
      'a zero-width space': 'CAF\u00c9\u200b-1',
      'a zero-width joiner': 'CAF\u00c9\u200d-1',
      'a right-to-left override': '\u202eCAF\u00c9-1',
      'a soft hyphen': 'CAF\u00c9\u00ad-1',
      'a variation selector': 'CAF\u00c9\ufe0f-1',
      'a tab': 'CAF\u00c9\t1',
      'only spaces': '   ',
    };
    for (const [name, sku] of Object.entries(invisible)) {
      const r = await create(sku);
      expect({ name, status: r.status, field: (r.body.errors as Array<{ field: string }>)?.[0]?.field }).toEqual({ name, status: 422, field: 'sku' });
    }
    // Runs of spaces are one space; the answer shows what is stored.
    expect((await create('  A   B ')).body.sku).toBe('A B');
    expect((await create('A B')).status).toBe(409);
  });

  it('refuses a currency that is no ISO 4217 code in use (ZZZ, XXX, XTS) with 422 naming it', async () => {
    const app = suite.app();
    for (const currency of ['ZZZ', 'XXX', 'XTS', 'XAU']) {
      const r = await call('POST', `${app.baseUrl}/api/v1/products`, { token: app.token(), body: { name: 'x', unit_price: 1, currency } });
      expect({ currency, status: r.status, errors: r.body.errors }).toEqual({ currency, status: 422, errors: [expect.objectContaining({ field: 'currency', code: 'invalid_format' })] });
    }
    expect((await call('POST', `${app.baseUrl}/api/v1/products`, { token: app.token(), body: { name: 'x', unit_price: 1, currency: 'JPY' } })).status).toBe(201);
  });
});
