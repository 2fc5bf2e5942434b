import { CREATE_PRODUCT_SCHEMA, CreateProductRequest, normalizeIdentifier, toPublicId } from '@invoicing/contracts';
import { defineResource } from '@invoicing/resource-api';
import { FieldErrors } from '@invoicing/service-kit';
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
    // Unique per organization, so compared in one form: look-alikes of a SKU are the same SKU (409).
    let sku: string | null = null;
    if (input.sku !== undefined) {
      const normalized = normalizeIdentifier(input.sku, CREATE_PRODUCT_SCHEMA.properties.sku.maxLength);
      if (!normalized.ok) new FieldErrors().add('sku', normalized.code, normalized.message).throwIfAny();
      else sku = normalized.value;
    }
    return Object.assign(new ProductEntity(), {
      name: input.name,
      description: input.description ?? null,
      sku,
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
