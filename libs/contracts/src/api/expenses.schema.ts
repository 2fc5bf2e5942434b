import { CURRENCY, DATE, nullable, objectBase, POSITIVE_MINOR_UNITS } from './common.schema';

export const CREATE_EXPENSE_SCHEMA = {
  $id: 'CreateExpenseRequest',
  type: 'object',
  additionalProperties: false,
  required: ['description', 'amount', 'currency', 'incurred_on'],
  properties: {
    description: { type: 'string', minLength: 1, maxLength: 1000 },
    amount: POSITIVE_MINOR_UNITS,
    currency: CURRENCY,
    category: { type: 'string', minLength: 1, maxLength: 100 },
    vendor: { type: 'string', minLength: 1, maxLength: 200 },
    incurred_on: DATE,
  },
} as const;

export const EXPENSE_SCHEMA = {
  $id: 'Expense',
  type: 'object',
  required: ['object', 'id', 'created_at', 'description', 'amount', 'currency', 'category', 'vendor', 'incurred_on'],
  properties: {
    ...objectBase('expense', 'exp'),
    description: { type: 'string' },
    amount: { type: 'integer' },
    currency: { type: 'string' },
    category: nullable({ type: 'string' }),
    vendor: nullable({ type: 'string' }),
    incurred_on: { type: 'string', format: 'date' },
  },
} as const;

export interface CreateExpenseRequest {
  description: string;
  amount: number;
  currency: string;
  category?: string;
  vendor?: string;
  incurred_on: string;
}
