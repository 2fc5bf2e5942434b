import { CURRENCY, nullable, objectBase } from './common.schema';

/**
 * A postal address as the API takes it: a client's, and the seller's own in the organization's
 * profile (organization-profile.schema.ts). The same shape everywhere, so an invoice prints both alike.
 */
export const ADDRESS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['line1', 'city', 'country'],
  properties: {
    line1: { type: 'string', minLength: 1, maxLength: 200 },
    line2: { type: 'string', maxLength: 200 },
    city: { type: 'string', minLength: 1, maxLength: 100 },
    postal_code: { type: 'string', maxLength: 20 },
    region: { type: 'string', maxLength: 100 },
    country: { type: 'string', format: 'country', description: 'ISO 3166-1 alpha-2, upper case.' },
  },
} as const;

/** An address as the API answers it ({@link ADDRESS_SCHEMA}, every key present, null where none was given), or null. */
export const ADDRESS_OBJECT_SCHEMA = {
  type: ['object', 'null'],
  properties: {
    line1: { type: 'string' },
    line2: { type: ['string', 'null'] },
    city: { type: 'string' },
    postal_code: { type: ['string', 'null'] },
    region: { type: ['string', 'null'] },
    country: { type: 'string' },
  },
} as const;

/** An address as a request sends it ({@link ADDRESS_SCHEMA}). */
export interface PostalAddressInput {
  line1: string;
  line2?: string;
  city: string;
  postal_code?: string;
  region?: string;
  country: string;
}

/** An address as the API answers it ({@link ADDRESS_OBJECT_SCHEMA}). */
export interface PostalAddress {
  line1: string;
  line2: string | null;
  city: string;
  postal_code: string | null;
  region: string | null;
  country: string;
}

export const CREATE_CLIENT_SCHEMA = {
  $id: 'CreateClientRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    email: { type: 'string', format: 'email', maxLength: 254 },
    phone: { type: 'string', minLength: 3, maxLength: 40, pattern: '^[0-9+()./ -]+$' },
    tax_id: { type: 'string', minLength: 1, maxLength: 50 },
    address: ADDRESS_SCHEMA,
    currency: CURRENCY,
  },
} as const;

export const CLIENT_SCHEMA = {
  $id: 'Client',
  type: 'object',
  required: ['object', 'id', 'created_at', 'name', 'email', 'phone', 'tax_id', 'address', 'currency'],
  properties: {
    ...objectBase('client', 'cli'),
    name: { type: 'string' },
    email: nullable({ type: 'string' }),
    phone: nullable({ type: 'string' }),
    tax_id: nullable({ type: 'string' }),
    address: ADDRESS_OBJECT_SCHEMA,
    currency: nullable({ type: 'string' }),
  },
} as const;

export interface CreateClientRequest {
  name: string;
  email?: string;
  phone?: string;
  tax_id?: string;
  address?: PostalAddressInput;
  currency?: string;
}
