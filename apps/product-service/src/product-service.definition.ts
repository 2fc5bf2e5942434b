import { defineResourceService } from '@invoicing/resource-api';
import { Products1763700400000 } from './database/migrations/1763700400000-products';
import { OutboxTraceContext1763701000000 } from './database/migrations/1763701000000-outbox-trace-context';
import { ListFilterIndexes1764400000000 } from './database/migrations/1764400000000-list-filter-indexes';
import { ProductEntity } from './products/product.entity';
import { PRODUCT_RESOURCE } from './products/product.resource';

export const PRODUCT_SERVICE = defineResourceService(PRODUCT_RESOURCE, {
  entities: [ProductEntity],
  migrations: [Products1763700400000, OutboxTraceContext1763701000000, ListFilterIndexes1764400000000],
});
