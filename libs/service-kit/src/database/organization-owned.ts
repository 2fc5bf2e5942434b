import { Column, PrimaryColumn } from 'typeorm';

/**
 * The columns every row an organization owns starts with: its own uuid, the owner's uuid (the
 * tenant filter of every query on the table) and when it was made. Entities extend it; TypeORM
 * reads column decorators of a base class that is not itself an entity, so the tenancy column is
 * declared once, under one name (`organizationId`, the uuid form: ADR 0021).
 */
export abstract class OrganizationOwned {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
