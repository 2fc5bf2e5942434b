import { defineResourceService } from '@invoicing/resource-api';
import { Clients1763700400000 } from './database/migrations/1763700400000-clients';
import { OutboxTraceContext1763701000000 } from './database/migrations/1763701000000-outbox-trace-context';
import { ListFilterIndexes1764400000000 } from './database/migrations/1764400000000-list-filter-indexes';
import { ClientEntity } from './clients/client.entity';
import { CLIENT_RESOURCE } from './clients/client.resource';

export const CLIENT_SERVICE = defineResourceService(CLIENT_RESOURCE, {
  entities: [ClientEntity],
  migrations: [Clients1763700400000, OutboxTraceContext1763701000000, ListFilterIndexes1764400000000],
});
