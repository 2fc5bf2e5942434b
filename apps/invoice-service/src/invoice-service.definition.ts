import { defineResourceService } from '@invoicing/resource-api';
import { Invoices1763700100000 } from './database/migrations/1763700100000-invoices';
import { ReferencesAndEvents1763700300000 } from './database/migrations/1763700300000-references-and-events';
import { InvoiceContentBytes1763700600000 } from './database/migrations/1763700600000-invoice-content-bytes';
import { OutboxTraceContext1763701000000 } from './database/migrations/1763701000000-outbox-trace-context';
import { AmountPaidInRange1764200000000 } from './database/migrations/1764200000000-amount-paid-in-range';
import { ListFilterIndexes1764400000000 } from './database/migrations/1764400000000-list-filter-indexes';
import { InvoiceParties1764500000000 } from './database/migrations/1764500000000-invoice-parties';
import { InvoiceEntity } from './invoices/invoice.entity';
import { INVOICE_RESOURCE } from './invoices/invoice.resource';

export const INVOICE_SERVICE = defineResourceService(INVOICE_RESOURCE, {
  entities: [InvoiceEntity],
  migrations: [Invoices1763700100000, ReferencesAndEvents1763700300000, InvoiceContentBytes1763700600000, OutboxTraceContext1763701000000, AmountPaidInRange1764200000000, ListFilterIndexes1764400000000, InvoiceParties1764500000000],
});
