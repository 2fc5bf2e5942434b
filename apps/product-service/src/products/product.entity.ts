import { moneyColumn } from '@invoicing/resource-api';
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ schema: 'products', name: 'products' })
export class ProductEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('text')
  name!: string;

  @Column('text', { nullable: true })
  description!: string | null;

  @Column('text', { nullable: true })
  sku!: string | null;

  @Column('bigint', { name: 'unit_price', transformer: moneyColumn })
  unitPrice!: number;

  @Column('text')
  currency!: string;

  @Column('integer', { name: 'tax_rate_bps' })
  taxRateBps!: number;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
