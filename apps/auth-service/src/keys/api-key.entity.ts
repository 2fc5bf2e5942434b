import { Column, Entity } from 'typeorm';
import { OrganizationOwned } from '@invoicing/service-kit';

/** `expired`: its `expires_at` passed (set by the expiry sweep; see isUsable for the instant itself). */
export type ApiKeyStatus = 'active' | 'revoked' | 'expired';

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

  /** Null: never expires. */
  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  /** Canonical entries (parseAllowedIps); empty: any address. */
  @Column('text', { name: 'allowed_ips', array: true })
  allowedIps!: string[];

  /** The secret before the last roll, accepted until `previousSecretExpiresAt` (both null otherwise). */
  @Column('bytea', { name: 'previous_secret_hash', nullable: true })
  previousSecretHash!: Buffer | null;

  @Column('timestamptz', { name: 'previous_secret_expires_at', nullable: true })
  previousSecretExpiresAt!: Date | null;

  @Column('timestamptz', { name: 'secret_last_used_at', nullable: true })
  secretLastUsedAt!: Date | null;

  @Column('timestamptz', { name: 'previous_secret_last_used_at', nullable: true })
  previousSecretLastUsedAt!: Date | null;

  /**
   * Incremented by every roll. A session is opened only for a client that authenticated against a
   * row of at least the key's floor in Redis (raised when a roll ends the old secret at once).
   */
  @Column('integer', { name: 'secret_generation' })
  secretGeneration!: number;

  /** Incremented by every change of `allowedIps`; orders the changes' events (the higher wins). */
  @Column('integer', { name: 'allowed_ips_version' })
  allowedIpsVersion!: number;

  /** When the key's secret was reported public and the key revoked for it (ADR 0025), and where. */
  @Column('timestamptz', { name: 'exposed_at', nullable: true })
  exposedAt!: Date | null;

  @Column('text', { name: 'exposed_url', nullable: true })
  exposedUrl!: string | null;

  /** When the seven-day notice (api_key_expiring.v1) was enqueued; null before. */
  @Column('timestamptz', { name: 'expiry_notice_sent_at', nullable: true })
  expiryNoticeSentAt!: Date | null;
}

/**
 * Whether the key may authenticate at `now` (ms): active and not past its expiry. The expiry sweep
 * marks it `expired` and announces it within a second; this makes the instant itself exact on the
 * token endpoints, whatever a cache or the sweep has seen.
 */
export function isUsable(key: Pick<ApiKeyEntity, 'status' | 'expiresAt'>, now: number): boolean {
  return key.status === 'active' && (key.expiresAt === null || key.expiresAt.getTime() > now);
}

/** The previous secret's hash while it is still accepted at `now` (ms), else null. */
export function livePreviousSecret(key: Pick<ApiKeyEntity, 'previousSecretHash' | 'previousSecretExpiresAt'>, now: number): Buffer | null {
  return key.previousSecretHash && key.previousSecretExpiresAt && key.previousSecretExpiresAt.getTime() > now ? key.previousSecretHash : null;
}
