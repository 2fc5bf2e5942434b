import { CURRENCY, MINOR_UNITS, nullable, objectBase, TAX_RATE_BPS } from './common.schema';

export const CREATE_PRODUCT_SCHEMA = {
  $id: 'CreateProductRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'unit_price', 'currency'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: 'string', maxLength: 1000 },
    sku: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description:
        'Unique per organization (409 on a duplicate). Stored in NFKC form, trimmed, runs of spaces made one, so that look-alikes (NFD, fullwidth, a trailing space) are the same SKU; invisible and format characters are refused (422). Case-sensitive.',
    },
    unit_price: MINOR_UNITS,
    currency: CURRENCY,
    tax_rate_bps: TAX_RATE_BPS,
  },
} as const;

export const PRODUCT_SCHEMA = {
  $id: 'Product',
  type: 'object',
  required: ['object', 'id', 'created_at', 'name', 'description', 'sku', 'unit_price', 'currency', 'tax_rate_bps'],
  properties: {
    ...objectBase('product', 'prd'),
    name: { type: 'string' },
    description: nullable({ type: 'string' }),
    sku: nullable({ type: 'string' }),
    unit_price: { type: 'integer' },
    currency: { type: 'string' },
    tax_rate_bps: { type: 'integer' },
  },
} as const;

export interface CreateProductRequest {
  name: string;
  description?: string;
  sku?: string;
  unit_price: number;
  currency: string;
  tax_rate_bps?: number;
}
