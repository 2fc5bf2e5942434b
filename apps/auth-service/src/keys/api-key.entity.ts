import { Column, Entity } from 'typeorm';
import { OrganizationOwned } from '@invoicing/service-kit';

export type ApiKeyStatus = 'active' | 'revoked';

/** Storage shape of an API key. The Secret Key itself is never stored: only its SHA-256. */
@Entity({ schema: 'auth', name: 'api_keys' })
export class ApiKeyEntity extends OrganizationOwned {
  @Column('text')
  name!: string;

  @Column('text', { name: 'client_id' })
  clientId!: string;

  @Column('bytea', { name: 'secret_hash' })
  secretHash!: Buffer;

  @Column('text', { array: true })
  scopes!: string[];

  @Column('text')
  status!: ApiKeyStatus;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;
}
