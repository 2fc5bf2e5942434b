import { postgresOptions } from '@invoicing/service-kit';
import type { DataSourceOptions } from 'typeorm';
import { UserEntity } from '../settings/user.entity';
import { ApiKeyEntity } from '../keys/api-key.entity';
import { OrganizationEntity } from '../keys/organization.entity';
import { OutboxMessageEntity } from '../revocation/outbox-message.entity';
import { InitialSchema1763700000000 } from './migrations/1763700000000-initial-schema';
import { Users1763700200000 } from './migrations/1763700200000-users';
import { ApiKeyLifecycle1763700700000 } from './migrations/1763700700000-api-key-lifecycle';
import { AuditEvents1763700800000 } from './migrations/1763700800000-audit-events';
import { KeyExposure1763700900000 } from './migrations/1763700900000-key-exposure';
import { OutboxTraceContext1763701000000 } from './migrations/1763701000000-outbox-trace-context';
import { LiveApiKeysIndex1763701100000 } from './migrations/1763701100000-live-api-keys-index';
import { OrganizationProfiles1764300000000 } from './migrations/1764300000000-organization-profiles';

/** Entities and migrations are listed, not globbed: the build output has no source tree to glob. */
export const AUTH_ENTITIES = [OrganizationEntity, ApiKeyEntity, OutboxMessageEntity, UserEntity];
export const AUTH_MIGRATIONS = [InitialSchema1763700000000, Users1763700200000, ApiKeyLifecycle1763700700000, AuditEvents1763700800000, KeyExposure1763700900000, OutboxTraceContext1763701000000, LiveApiKeysIndex1763701100000, OrganizationProfiles1764300000000];

export function authDataSourceOptions(url: string, poolSize?: number): DataSourceOptions {
  return postgresOptions({
    url,
    schema: 'auth',
    entities: AUTH_ENTITIES,
    migrations: AUTH_MIGRATIONS,
    applicationName: 'auth-service',
    poolSize,
  });
}
