import { moneyColumn } from '@invoicing/resource-api';
import { Column, Entity } from 'typeorm';
import { OrganizationOwned } from '@invoicing/service-kit';

@Entity({ schema: 'expenses', name: 'expenses' })
export class ExpenseEntity extends OrganizationOwned {
  @Column('text')
  description!: string;

  @Column('bigint', { transformer: moneyColumn })
  amount!: number;

  @Column('text')
  currency!: string;

  @Column('text', { nullable: true })
  category!: string | null;

  @Column('text', { nullable: true })
  vendor!: string | null;

  @Column('date', { name: 'incurred_on' })
  incurredOn!: string;
}
