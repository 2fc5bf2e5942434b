import { moneyColumn } from '@invoicing/resource-api';
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ schema: 'expenses', name: 'expenses' })
export class ExpenseEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

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

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
