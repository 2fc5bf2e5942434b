import type { Resource } from '../scopes';
import { idOf } from './common.schema';
import { INVOICE_STATUSES } from './invoices.schema';

/** List filters per resource (docs/api.md section 7). The services' definitions must match these names. */
export const LIST_FILTERS: Record<Resource, Record<string, Record<string, unknown>>> = {
  invoices: { client_id: idOf('cli'), status: { enum: INVOICE_STATUSES } },
  payments: { invoice_id: idOf('inv') },
  clients: {},
  products: {},
  expenses: {},
};
