import { defineResourceService } from '@invoicing/resource-api';
import { Expenses1763700400000 } from './database/migrations/1763700400000-expenses';
import { OutboxTraceContext1763701000000 } from './database/migrations/1763701000000-outbox-trace-context';
import { ListFilterIndexes1764400000000 } from './database/migrations/1764400000000-list-filter-indexes';
import { ExpenseEntity } from './expenses/expense.entity';
import { EXPENSE_RESOURCE } from './expenses/expense.resource';

export const EXPENSE_SERVICE = defineResourceService(EXPENSE_RESOURCE, {
  entities: [ExpenseEntity],
  migrations: [Expenses1763700400000, OutboxTraceContext1763701000000, ListFilterIndexes1764400000000],
});
