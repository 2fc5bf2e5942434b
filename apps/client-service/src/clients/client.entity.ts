import { Column, Entity, PrimaryColumn } from 'typeorm';

export interface ClientAddress {
  line1: string;
  line2?: string;
  city: string;
  postal_code?: string;
  region?: string;
  country: string;
}

@Entity({ schema: 'clients', name: 'clients' })
export class ClientEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

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

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
