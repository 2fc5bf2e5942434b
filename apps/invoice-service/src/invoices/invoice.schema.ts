/** JSON Schema of `POST /api/v1/invoices`; validates requests and documents them in OpenAPI. */
export const CREATE_INVOICE_SCHEMA = {
  $id: 'CreateInvoiceRequest',
  type: 'object',
  additionalProperties: false,
  required: ['client_id', 'currency', 'line_items'],
  properties: {
    client_id: { type: 'string', pattern: '^cli_[0-9a-f]{32}$', description: 'A client of the organization.' },
    number: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9][A-Za-z0-9._/-]*$',
      description: 'Unique per organization; generated in sequence (INV-000001...) when omitted.',
    },
    currency: { type: 'string', format: 'currency', description: 'ISO 4217, upper case.' },
    issue_date: { type: 'string', format: 'date', description: 'Defaults to today (UTC).' },
    due_date: { type: 'string', format: 'date', description: 'Not before issue_date.' },
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
          description: { type: 'string', minLength: 1, maxLength: 1000 },
          quantity: {
            type: ['number', 'string'],
            description: 'Greater than 0, at most 3 decimal places (a JSON number or a decimal string).',
          },
          unit_price: { type: 'integer', minimum: 0, maximum: 1000000000000, description: 'Minor units.' },
          tax_rate_bps: { type: 'integer', minimum: 0, maximum: 10000, description: '2000 = 20 %.' },
          product_id: { type: 'string', pattern: '^prd_[0-9a-f]{32}$' },
        },
      },
    },
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
