import { CreateProductRequest, toPublicId } from '@invoicing/contracts';
import { defineResource } from '@invoicing/resource-api';
import { ProductEntity } from './product.entity';

export const PRODUCT_RESOURCE = defineResource<ProductEntity, CreateProductRequest>('products', {
  entity: ProductEntity,
  conflicts: {
    products_sku_unique: {
      detail: 'A product with this SKU already exists.',
      error: { field: 'sku', code: 'duplicate', message: 'is already used by another product' },
    },
  },

  async build({ input }) {
    return Object.assign(new ProductEntity(), {
      name: input.name,
      description: input.description ?? null,
      sku: input.sku ?? null,
      unitPrice: input.unit_price,
      currency: input.currency,
      taxRateBps: input.tax_rate_bps ?? 0,
    });
  },

  view: (p) => ({
    object: 'product',
    id: toPublicId('prd', p.id),
    created_at: p.createdAt.toISOString(),
    name: p.name,
    description: p.description,
    sku: p.sku,
    unit_price: p.unitPrice,
    currency: p.currency,
    tax_rate_bps: p.taxRateBps,
  }),
});
