import { moneyColumn } from '@invoicing/resource-api';
import { Column, Entity } from 'typeorm';
import { OrganizationOwned } from '@invoicing/service-kit';

@Entity({ schema: 'payments', name: 'payments' })
export class PaymentEntity extends OrganizationOwned {
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
}
