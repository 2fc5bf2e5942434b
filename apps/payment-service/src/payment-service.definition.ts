import { defineResourceService } from '@invoicing/resource-api';
import { Payments1763700400000 } from './database/migrations/1763700400000-payments';
import { OutboxTraceContext1763701000000 } from './database/migrations/1763701000000-outbox-trace-context';
import { InvoicePaymentTotals1764200000000 } from './database/migrations/1764200000000-invoice-payment-totals';
import { ListFilterIndexes1764400000000 } from './database/migrations/1764400000000-list-filter-indexes';
import { PaymentEntity } from './payments/payment.entity';
import { PAYMENT_RESOURCE } from './payments/payment.resource';

export const PAYMENT_SERVICE = defineResourceService(PAYMENT_RESOURCE, {
  entities: [PaymentEntity],
  migrations: [Payments1763700400000, OutboxTraceContext1763701000000, InvoicePaymentTotals1764200000000, ListFilterIndexes1764400000000],
});
