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
});
