import { buildRow, orgScopeOf } from '@invoicing/resource-api';
import { PRODUCT_RESOURCE } from './product.resource';

const scope = orgScopeOf({ organizationId: '11111111-1111-7111-8111-111111111111' });

describe('product resource', () => {
  it('defaults the tax rate to 0 and maps the SKU conflict to a 409 on sku', async () => {
    const entity = await buildRow(PRODUCT_RESOURCE, {
      scope,
      input: { name: 'Widget', unit_price: 1250, currency: 'EUR' },
      id: '01930000-0000-7000-8000-000000000002',
      now: new Date('2026-11-21T10:00:00.000Z'),
    } as never);
    expect(PRODUCT_RESOURCE.view(entity)).toMatchObject({ object: 'product', unit_price: 1250, tax_rate_bps: 0, sku: null });
    expect(PRODUCT_RESOURCE.conflicts?.products_sku_unique.error).toEqual({ field: 'sku', code: 'duplicate', message: expect.any(String) });
  });
});
