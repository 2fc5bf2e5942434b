import { COMPUTED_MINOR_UNITS, CURRENCY, DATE, idOf, MINOR_UNITS, nullable, objectBase, TAX_RATE_BPS } from './common.schema';

export const INVOICE_STATUSES = ['open', 'partially_paid', 'paid'] as const;

export const CREATE_INVOICE_SCHEMA = {
  $id: 'CreateInvoiceRequest',
  type: 'object',
  additionalProperties: false,
  required: ['client_id', 'currency', 'line_items'],
  properties: {
    client_id: idOf('cli', 'A client of the organization.'),
    number: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9][A-Za-z0-9._/-]*$',
      description: 'Unique per organization; generated in sequence (INV-000001, ...) when omitted.',
    },
    currency: CURRENCY,
    issue_date: { ...DATE, description: 'Defaults to today (UTC).' },
    due_date: { ...DATE, description: 'Not before issue_date.' },
    notes: { type: 'string', maxLength: 5000 },
    line_items: {
      type: 'array',
      minItems: 1,
      maxItems: 500,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['quantity'],
        properties: {
          description: { type: 'string', minLength: 1, maxLength: 1000, description: 'Required without product_id.' },
          quantity: {
            type: ['number', 'string'],
            description: 'Greater than 0, at most 3 decimal places (a JSON number or a decimal string).',
          },
          unit_price: { ...MINOR_UNITS, description: 'Minor units; required without product_id.' },
          tax_rate_bps: TAX_RATE_BPS,
          product_id: idOf('prd', 'Fills in a missing description, unit_price and tax_rate_bps.'),
        },
      },
    },
  },
} as const;

export const INVOICE_SCHEMA = {
  $id: 'Invoice',
  type: 'object',
  required: [
    'object', 'id', 'created_at', 'client_id', 'number', 'currency', 'issue_date', 'due_date', 'status', 'line_items',
    'subtotal', 'tax_total', 'total', 'amount_paid', 'amount_due', 'notes',
  ],
  properties: {
    ...objectBase('invoice', 'inv'),
    client_id: idOf('cli'),
    number: { type: 'string' },
    currency: { type: 'string' },
    issue_date: { type: 'string', format: 'date' },
    due_date: nullable({ type: 'string', format: 'date' }),
    status: { enum: INVOICE_STATUSES, description: '`paid` once amount_paid >= total.' },
    line_items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['description', 'quantity', 'unit_price', 'tax_rate_bps', 'product_id', 'amount', 'tax'],
        properties: {
          description: { type: 'string' },
          quantity: { type: 'number' },
          unit_price: { type: 'integer' },
          tax_rate_bps: { type: 'integer' },
          product_id: nullable(idOf('prd')),
          amount: { ...COMPUTED_MINOR_UNITS, description: 'round_half_up(quantity × unit_price)' },
          tax: { ...COMPUTED_MINOR_UNITS, description: 'round_half_up(amount × tax_rate_bps / 10000)' },
        },
      },
    },
    subtotal: COMPUTED_MINOR_UNITS,
    tax_total: COMPUTED_MINOR_UNITS,
    total: { ...COMPUTED_MINOR_UNITS, description: 'subtotal + tax_total; at most 10^12 (a larger invoice is refused).' },
    amount_paid: {
      ...COMPUTED_MINOR_UNITS,
      description: 'The sum of the payments applied; may exceed total (overpayment), never 10^12 (a payment that would take it past is refused).',
    },
    amount_due: { ...COMPUTED_MINOR_UNITS, description: 'max(total − amount_paid, 0)' },
    notes: nullable({ type: 'string' }),
  },
} as const;

export interface CreateInvoiceLine {
  description?: string;
  quantity: number | string;
  unit_price?: number;
  tax_rate_bps?: number;
  product_id?: string;
}

export interface CreateInvoiceRequest {
  client_id: string;
  number?: string;
  currency: string;
  issue_date?: string;
  due_date?: string;
  notes?: string;
  line_items: CreateInvoiceLine[];
}
