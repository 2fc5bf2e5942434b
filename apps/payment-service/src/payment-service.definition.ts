import type { ResourceServiceDefinition } from '@invoicing/resource-api';
import { Payments1763700400000 } from './database/migrations/1763700400000-payments';
import { OutboxTraceContext1763701000000 } from './database/migrations/1763701000000-outbox-trace-context';
import { PaymentEntity } from './payments/payment.entity';
import { PAYMENT_RESOURCE } from './payments/payment.resource';

export const PAYMENT_SERVICE: ResourceServiceDefinition = {
  name: 'payment-service',
  schema: 'payments',
  role: 'payment',
  defaultPort: 3004,
  references: PAYMENT_RESOURCE.references,
  entities: [PaymentEntity],
  migrations: [Payments1763700400000, OutboxTraceContext1763701000000],
  resource: PAYMENT_RESOURCE,
};
