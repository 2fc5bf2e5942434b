import { Column, Entity } from 'typeorm';
import { OrganizationOwned } from '@invoicing/service-kit';

export interface ClientAddress {
  line1: string;
  line2?: string;
  city: string;
  postal_code?: string;
  region?: string;
  country: string;
}

@Entity({ schema: 'clients', name: 'clients' })
export class ClientEntity extends OrganizationOwned {
  @Column('text')
  name!: string;

  @Column('text', { nullable: true })
  email!: string | null;

  @Column('text', { nullable: true })
  phone!: string | null;

  @Column('text', { name: 'tax_id', nullable: true })
  taxId!: string | null;

  @Column('jsonb', { nullable: true })
  address!: ClientAddress | null;

  @Column('text', { nullable: true })
  currency!: string | null;
}
