import { CURRENCY, idOf, nullable, objectBase, POSITIVE_MINOR_UNITS, TIMESTAMP, TIMESTAMP_INPUT } from './common.schema';

export const PAYMENT_METHODS = ['card', 'bank_transfer', 'cash', 'check', 'other'] as const;

export const CREATE_PAYMENT_SCHEMA = {
  $id: 'CreatePaymentRequest',
  type: 'object',
  additionalProperties: false,
  required: ['invoice_id', 'amount', 'currency'],
  properties: {
    invoice_id: idOf('inv', 'An invoice of the organization; its currency must match.'),
    amount: {
      ...POSITIVE_MINOR_UNITS,
      description: 'Integer minor units, > 0. The payments of one invoice together may exceed its total (overpayment) but not 10^12: past that, 422.',
    },
    currency: CURRENCY,
    method: { enum: PAYMENT_METHODS },
    paid_at: { ...TIMESTAMP_INPUT, description: 'Defaults to now. RFC 3339, from 1900-01-01 to 9999-12-31.' },
    reference: { type: 'string', minLength: 1, maxLength: 200 },
  },
} as const;

export const PAYMENT_SCHEMA = {
  $id: 'Payment',
  type: 'object',
  required: ['object', 'id', 'created_at', 'invoice_id', 'amount', 'currency', 'method', 'paid_at', 'reference'],
  properties: {
    ...objectBase('payment', 'pay'),
    invoice_id: idOf('inv'),
    amount: { type: 'integer' },
    currency: { type: 'string' },
    method: { enum: [...PAYMENT_METHODS, null] },
    paid_at: TIMESTAMP,
    reference: nullable({ type: 'string' }),
  },
} as const;

export interface CreatePaymentRequest {
  invoice_id: string;
  amount: number;
  currency: string;
  method?: (typeof PAYMENT_METHODS)[number];
  paid_at?: string;
  reference?: string;
}
