import { CREATE_PRODUCT_SCHEMA, CreateProductRequest, toPublicId } from '@invoicing/contracts';
import type { ResourceDefinition } from '@invoicing/resource-api';
import { ProductEntity } from './product.entity';

export const PRODUCT_RESOURCE: ResourceDefinition<ProductEntity, CreateProductRequest> = {
  resource: 'products',
  kind: 'product',
  idPrefix: 'prd',
  entity: ProductEntity,
  createSchema: CREATE_PRODUCT_SCHEMA,
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
};
