import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { formatScopes, isScope, newId, parseAllowedIps, parsePublicId, toPublicId } from '@invoicing/contracts';
import { FieldError, PlatformError } from '@invoicing/service-kit';
import { Brackets, DataSource, EntityManager } from 'typeorm';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { hashCredential, newClientId, newSecretKey } from './credential-format';
import { AuditLog } from '../audit/audit-log';
import type { AuditActor } from '../audit/audit-chain';
import { OrganizationEntity } from './organization.entity';
import { ApiKeyEntity, isUsable, livePreviousSecret } from './api-key.entity';

/** An API key as the API shows it; never carries the secret. */
export interface ApiKeyView {
  object: 'api_key';
  id: string;
  organization_id: string;
  name: string;
  client_id: string;
  scopes: string[];
  status: 'active' | 'revoked' | 'expired';
  created_at: string;
  /** The key's last use: an exchange with either secret, or a refresh. */
  last_used_at: string | null;
  revoked_at: string | null;
  /** Null: never expires. */
  expires_at: string | null;
  /** Empty: any address. */
  allowed_ips: string[];
  /** Last exchange (or refresh grant sending credentials) with the current secret. */
  secret_last_used_at: string | null;
  /** While the secret replaced by a roll still works: until when, and its last use. */
  previous_secret_expires_at: string | null;
  previous_secret_last_used_at: string | null;
  /** Set when the secret was reported public (GitHub secret scanning) and the key revoked for it. */
  exposed_at: string | null;
  /** Where it was found, as the report said (untrusted text: a URL to show, not to follow blindly). */
  exposed_url: string | null;
}

/**
 * Input that fails validation: 422 naming every field at fault (`errors`), wherever the key is
 * created or changed (the settings API, sign-up's organization, the CLI, which prints `errors`).
 */
export class InvalidApiKeyInput extends PlatformError {
  declare readonly errors: FieldError[];

  constructor(field: string, code: string, message: string, more: FieldError[] = []) {
    super(422, 'validation-failed', 'The request body has invalid fields.', { errors: [{ field, code, message }, ...more] });
  }

  static of(errors: FieldError[]): InvalidApiKeyInput {
    const [first, ...more] = errors;
    return new InvalidApiKeyInput(first.field, first.code, first.message, more);
  }
}

/** A change asked of a key that is revoked or expired: 409, `errors[0]` field `status`, code `key_revoked` or `key_expired`. */
export class ApiKeyNotActive extends PlatformError {
  constructor(readonly keyStatus: ApiKeyView['status']) {
    super(409, `key_${keyStatus}`, `The API key is ${keyStatus}; it can no longer be changed.`, {
      errors: [{ field: 'status', code: `key_${keyStatus}`, message: `the key is ${keyStatus}` }],
    });
  }
}

/**
 * `expires_at` of a new key: absent or null (never), else an RFC 3339 date-time with an offset, in
 * the future and at most one calendar year after `now`.
 */
export function parseExpiry(value: unknown, now: Date): Date | null {
  if (value === undefined || value === null) return null;
  const text = typeof value === 'string' ? value : '';
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/.exec(text);
  const at = m ? new Date(text.replace(' ', 'T')) : null;
  // Date would roll 2026-02-30 over to March: the calendar fields must survive a round trip.
  const calendar = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (!m || !at || Number.isNaN(at.getTime()) || calendar!.getUTCDate() !== Number(m[3]) || Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) {
    throw new InvalidApiKeyInput('expires_at', 'invalid_format', 'must be an RFC 3339 date-time with an offset, e.g. 2027-01-31T23:59:59Z');
  }
  if (at.getTime() <= now.getTime()) throw new InvalidApiKeyInput('expires_at', 'in_past', 'must be in the future');
  const limit = new Date(now);
  limit.setUTCFullYear(limit.getUTCFullYear() + 1);
  if (at.getTime() > limit.getTime()) throw new InvalidApiKeyInput('expires_at', 'too_far', `must be at most one year ahead (${limit.toISOString()})`);
  return at;
}

/** `allowed_ips` in canonical form, or every entry at fault (`allowed_ips[3]`). */
export function parseAllowedIpsField(value: unknown): string[] {
  if (value === undefined) return [];
  const result = parseAllowedIps(value);
  if (result.ok) return result.value;
  throw InvalidApiKeyInput.of(
    result.errors.map((e) => ({ field: e.index === null ? 'allowed_ips' : `allowed_ips[${e.index}]`, code: e.code, message: e.message })),
  );
}

/** What a new key may carry besides its name and scopes, and who made it (for the audit log). */
export interface NewKeyOptions {
  expiresAt?: unknown;
  allowedIps?: unknown;
  /** A dashboard user (`usr_...`), or the system for the CLI (the default). */
  actor?: AuditActor;
  address?: string | null;
  /** Runs once the input is valid, before anything is written; throws to refuse (a rate limit). */
  admit?: () => Promise<void>;
}

/** The organization already holds as many live keys as it may (MAX_LIVE_KEYS_PER_ORGANIZATION): 409 `key_limit_reached`. */
export class ApiKeyLimitReached extends PlatformError {
  constructor(readonly limit: number) {
    super(409, 'key_limit_reached', `The organization already has ${limit} live API keys, the most it may hold; revoke one it no longer uses first.`, {
      errors: [{ field: 'organization', code: 'key_limit_reached', message: `at most ${limit} live keys` }],
    });
  }
}

/** The key list's `status` filter, as `toView` names a key's status at `:at`. */
const STATUS_CONDITIONS: Record<ApiKeyView['status'], string> = {
  active: "(k.status = 'active' AND (k.expiresAt IS NULL OR k.expiresAt > :at))",
  expired: "(k.status = 'expired' OR (k.status = 'active' AND k.expiresAt <= :at))",
  revoked: "k.status = 'revoked'",
};

/** Organizations and API keys (Postgres), for the CLI and the settings API alike. */
@Injectable()
export class ApiKeysService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    private readonly audit: AuditLog,
  ) {}

  /**
   * The one place an organization is created (the CLI's create-key, signup): its name trimmed, 1 to
   * 200 characters. `manager` is the caller's transaction when the organization commits with more
   * (signup's first user).
   */
  async createOrganization(name: string, now = new Date(), manager: EntityManager = this.db.manager): Promise<OrganizationEntity> {
    const trimmed = name.trim();
    if (trimmed.length === 0) throw new InvalidApiKeyInput('organization_name', 'required', 'is required');
    if (trimmed.length > 200) throw new InvalidApiKeyInput('organization_name', 'length', 'must be 1 to 200 characters');
    const org: OrganizationEntity = { id: uuidOf(newId('org')), name: trimmed, createdAt: now };
    await manager.getRepository(OrganizationEntity).insert(org);
    return org;
  }

  /** Creates a key; the returned secret exists nowhere else (only its SHA-256 is stored). */
  async createKey(
    organizationId: string,
    name: string,
    scopes: unknown,
    now = new Date(),
    options: NewKeyOptions = {},
  ): Promise<{ key: ApiKeyView; clientSecret: string }> {
    const trimmed = typeof name === 'string' ? name.trim() : '';
    if (trimmed.length < 1 || trimmed.length > 100) {
      throw new InvalidApiKeyInput('name', 'length', 'must be 1 to 100 characters');
    }
    if (!Array.isArray(scopes) || scopes.length === 0) {
      throw new InvalidApiKeyInput('scopes', 'required', 'choose at least one scope');
    }
    const unknown = scopes.filter((s) => !isScope(s));
    if (unknown.length > 0) {
      throw new InvalidApiKeyInput('scopes', 'unknown_scope', `unknown scopes: ${unknown.map(String).join(', ')}`);
    }
    const expiresAt = parseExpiry(options.expiresAt, now);
    const allowedIps = parseAllowedIpsField(options.allowedIps);
    await options.admit?.();
    const secret = newSecretKey();
    const entity: ApiKeyEntity = {
      id: uuidOf(newId('key')),
      organizationId,
      name: trimmed,
      clientId: newClientId(),
      secretHash: hashCredential(secret),
      scopes: formatScopes(scopes as string[]).split(' '),
      status: 'active',
      createdAt: now,
      revokedAt: null,
      lastUsedAt: null,
      expiresAt,
      allowedIps,
      previousSecretHash: null,
      previousSecretExpiresAt: null,
      secretLastUsedAt: null,
      previousSecretLastUsedAt: null,
      expiryNoticeSentAt: null,
      secretGeneration: 0,
      allowedIpsVersion: 0,
      exposedAt: null,
      exposedUrl: null,
    };
    await this.db.transaction(async (tx) => {
      // Creations in one organization take turns (a transaction-scoped advisory lock: the runtime
      // role needs no UPDATE on organizations), so two at once cannot both pass the count.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`api_keys:${organizationId}`]);
      const [{ live }] = (await tx.query(`SELECT count(*)::int AS live FROM auth.api_keys WHERE organization_id = $1 AND status = 'active'`, [
        organizationId,
      ])) as Array<{ live: number }>;
      if (live >= this.config.MAX_LIVE_KEYS_PER_ORGANIZATION) throw new ApiKeyLimitReached(this.config.MAX_LIVE_KEYS_PER_ORGANIZATION);
      await tx.getRepository(ApiKeyEntity).insert(entity);
      await this.audit.record(tx, {
        type: 'api_key.created',
        organizationId,
        actor: options.actor ?? { kind: 'system', id: null },
        apiKeyId: toPublicId('key', entity.id),
        clientAddress: options.address ?? null,
        occurredAt: now,
        data: { name: entity.name, scopes: entity.scopes, expires_at: expiresAt ? expiresAt.toISOString() : null, allowed_ips: allowedIps },
      });
    });
    return { key: toView(entity, now.getTime()), clientSecret: secret };
  }

  /**
   * A page of the organization's keys in the statuses asked for, newest first, continuing after the
   * key `startingAfter` (a `key_` id). The statuses are judged at `now` as the view shows them (a key
   * past `expires_at` is expired before the sweep marks it), and the cursor is compared by id, not
   * looked up: a key that changes status between two pages neither ends the walk nor repeats.
   */
  async listForOrganization(
    organizationId: string,
    query: { limit: number; startingAfter?: string; statuses: readonly ApiKeyView['status'][] },
    now = Date.now(),
  ): Promise<{ data: ApiKeyView[]; hasMore: boolean }> {
    const at = new Date(now);
    const builder = this.db
      .getRepository(ApiKeyEntity)
      .createQueryBuilder('k')
      .where('k.organizationId = :organizationId', { organizationId })
      .andWhere(
        new Brackets((any) => {
          for (const status of new Set(query.statuses)) any.orWhere(STATUS_CONDITIONS[status], { at });
        }),
      );
    const after = query.startingAfter ? parsePublicId('key', query.startingAfter) : null;
    if (after) builder.andWhere('k.id < :after', { after });
    const rows = await builder.orderBy('k.id', 'DESC').limit(query.limit + 1).getMany();
    return { data: rows.slice(0, query.limit).map((row) => toView(row, now)), hasMore: rows.length > query.limit };
  }

  /** A key of this organization; null for an absent id and for another organization's key alike. */
  async findInOrganization(organizationId: string, publicId: string): Promise<ApiKeyEntity | null> {
    const id = parsePublicId('key', publicId);
    return id ? this.db.getRepository(ApiKeyEntity).findOneBy({ id, organizationId }) : null;
  }

  async findById(id: string): Promise<ApiKeyEntity | null> {
    return this.db.getRepository(ApiKeyEntity).findOneBy({ id });
  }

  /** The key behind a Client ID, whatever its status; null when there is none. */
  async findByClientId(clientId: string): Promise<ApiKeyEntity | null> {
    return this.db.getRepository(ApiKeyEntity).findOne({ where: { clientId } });
  }
}

export function uuidOf(publicId: string): string {
  const prefix = publicId.slice(0, publicId.indexOf('_')) as Parameters<typeof parsePublicId>[0];
  const uuid = parsePublicId(prefix, publicId);
  if (!uuid) throw new Error(`not an id: ${publicId}`);
  return uuid;
}

/**
 * Marks a key revoked inside the caller's transaction: the revocation outbox commits the key's status
 * and its event together, so a revoked key is always announced. The first revocation time stays.
 * `revokedAtMs`: milliseconds since the epoch as a decimal string, as Redis recorded it.
 */
export async function markKeyRevoked(tx: EntityManager, apiKeyUuid: string, revokedAtMs: string): Promise<void> {
  await tx.query(
    `UPDATE auth.api_keys SET status = 'revoked', revoked_at = COALESCE(revoked_at, to_timestamp($2::bigint / 1000.0))
      WHERE id = $1`,
    [apiKeyUuid, revokedAtMs],
  );
}

/**
 * The key as the API shows it at `now` (ms): `expired` from the instant of its expiry (the sweep
 * records it within a second), and the previous secret only while it still works.
 */
export function toView(k: ApiKeyEntity, now = Date.now()): ApiKeyView {
  const previousLive = livePreviousSecret(k, now) !== null;
  return {
    object: 'api_key',
    id: toPublicId('key', k.id),
    organization_id: toPublicId('org', k.organizationId),
    name: k.name,
    client_id: k.clientId,
    scopes: k.scopes,
    status: k.status === 'active' && !isUsable(k, now) ? 'expired' : k.status,
    created_at: k.createdAt.toISOString(),
    last_used_at: iso(k.lastUsedAt),
    revoked_at: iso(k.revokedAt),
    expires_at: iso(k.expiresAt),
    allowed_ips: k.allowedIps,
    secret_last_used_at: iso(k.secretLastUsedAt),
    previous_secret_expires_at: previousLive ? iso(k.previousSecretExpiresAt) : null,
    previous_secret_last_used_at: previousLive ? iso(k.previousSecretLastUsedAt) : null,
    exposed_at: iso(k.exposedAt),
    exposed_url: k.exposedUrl,
  };
}

function iso(d: Date | null): string | null {
  return d ? d.toISOString() : null;
}
