import { moneyColumn } from '@invoicing/resource-api';
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ schema: 'payments', name: 'payments' })
export class PaymentEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'invoice_id' })
  invoiceId!: string;

  @Column('bigint', { transformer: moneyColumn })
  amount!: number;

  @Column('text')
  currency!: string;

  @Column('text', { nullable: true })
  method!: string | null;

  @Column('timestamptz', { name: 'paid_at' })
  paidAt!: Date;

  @Column('text', { nullable: true })
  reference!: string | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
