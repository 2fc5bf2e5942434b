import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { formatScopes, isScope, newId, parsePublicId, toPublicId } from '@invoicing/contracts';
import { DataSource, EntityManager } from 'typeorm';
import { hashCredential, newClientId, newSecretKey } from './credential-format';
import { OrganizationEntity } from './organization.entity';
import { ApiKeyEntity } from './api-key.entity';

/** An API key as the API shows it; never carries the secret. */
export interface ApiKeyView {
  object: 'api_key';
  id: string;
  organization_id: string;
  name: string;
  client_id: string;
  scopes: string[];
  status: 'active' | 'revoked';
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export class InvalidApiKeyInput extends Error {
  constructor(
    readonly field: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Organizations and API keys (Postgres), for the CLI and the settings API alike. */
@Injectable()
export class ApiKeysService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

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
    };
    await this.db.getRepository(ApiKeyEntity).insert(entity);
    return { key: toView(entity), clientSecret: secret };
  }

  /** Every key of an organization, newest first (an organization has few). */
  async listForOrganization(organizationId: string): Promise<ApiKeyView[]> {
    const rows = await this.db.getRepository(ApiKeyEntity).find({
      where: { organizationId },
      order: { id: 'DESC' },
      take: 1000,
    });
    return rows.map(toView);
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

export function toView(k: ApiKeyEntity): ApiKeyView {
  return {
    object: 'api_key',
    id: toPublicId('key', k.id),
    organization_id: toPublicId('org', k.organizationId),
    name: k.name,
    client_id: k.clientId,
    scopes: k.scopes,
    status: k.status,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt ? k.lastUsedAt.toISOString() : null,
    revoked_at: k.revokedAt ? k.revokedAt.toISOString() : null,
  };
}
