import { CreateExpenseRequest, toPublicId } from '@invoicing/contracts';
import { defineResource } from '@invoicing/resource-api';
import { ExpenseEntity } from './expense.entity';

export const EXPENSE_RESOURCE = defineResource<ExpenseEntity, CreateExpenseRequest>('expenses', {
  entity: ExpenseEntity,

  async build({ input }) {
    return Object.assign(new ExpenseEntity(), {
      description: input.description,
      amount: input.amount,
      currency: input.currency,
      category: input.category ?? null,
      vendor: input.vendor ?? null,
      incurredOn: input.incurred_on,
    });
  },

  view: (e) => ({
    object: 'expense',
    id: toPublicId('exp', e.id),
    created_at: e.createdAt.toISOString(),
    description: e.description,
    amount: e.amount,
    currency: e.currency,
    category: e.category,
    vendor: e.vendor,
    incurred_on: e.incurredOn,
  }),
});
