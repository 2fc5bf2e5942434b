import { moneyColumn } from '@invoicing/resource-api';
import { Column, Entity } from 'typeorm';
import { OrganizationOwned } from '@invoicing/service-kit';

@Entity({ schema: 'products', name: 'products' })
export class ProductEntity extends OrganizationOwned {
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
}
