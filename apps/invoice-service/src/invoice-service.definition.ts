import type { ResourceServiceDefinition } from '@invoicing/resource-api';
import { Invoices1763700100000 } from './database/migrations/1763700100000-invoices';
import { InvoiceEntity } from './invoices/invoice.entity';
import { InvoicesModule } from './invoices/invoices.module';

export const INVOICE_SERVICE: ResourceServiceDefinition = {
  name: 'invoice-service',
  schema: 'invoices',
  role: 'invoice',
  defaultPort: 3002,
  entities: [InvoiceEntity],
  migrations: [Invoices1763700100000],
  feature: InvoicesModule,
};
