import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { UPDATE_API_KEY_SCHEMA, UpdateApiKeyRequest } from '@invoicing/contracts';
import { compileBody, FieldError, ProblemException } from '@invoicing/service-kit';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { ApiKeyEntity, isUsable } from '../keys/api-key.entity';
import { ApiKeyNotActive, ApiKeysService, ApiKeyView, InvalidApiKeyInput, parseAllowedIpsField, toView } from '../keys/api-keys.service';
import { RevocationOutbox } from '../revocation/revocation-outbox.service';
import type { RevocationActor } from '../sessions/session-store';
import { AuditLog, keyChangeEntry } from '../audit/audit-log';
import { ApiKeyChanges } from './api-key-changes';
import { KeyChangeLimit } from './key-change-limit';
import { allowedIpsChanged } from './key-events';

const validateUpdate = compileBody<UpdateApiKeyRequest>(UPDATE_API_KEY_SCHEMA);

/**
 * Fields of the key view that are fixed for the key's life, and what to do instead. A PATCH naming
 * one is refused as a whole (422, code `immutable`), so nothing changes.
 */
const FIXED: Record<string, string> = {
  scopes: 'cannot be changed: create a key with the scopes you need, then revoke this one',
  organization_id: 'cannot be changed: a key belongs to one organization for its life',
  expires_at: 'cannot be changed: create a key with the expiry you need, then revoke this one',
  client_id: 'cannot be changed',
  client_secret: 'cannot be set: roll the secret instead (POST .../roll)',
  id: 'cannot be changed',
  object: 'cannot be changed',
  status: 'cannot be changed: revoke the key instead (POST .../revoke)',
  created_at: 'cannot be changed',
  last_used_at: 'cannot be changed',
  revoked_at: 'cannot be changed',
  secret_last_used_at: 'cannot be changed',
  previous_secret_expires_at: 'cannot be changed: roll the secret to set a new overlap',
  previous_secret_last_used_at: 'cannot be changed',
};

/**
 * PATCH of a key (ADR 0023): its name and its IP allowlist. A new allowlist commits with its event
 * (api_key_allowed_ips_changed.v1), so every resource service applies it to the tokens already
 * issued within the revocation bound, and every auth-service instance forgets its cached copy.
 */
@Injectable()
export class KeyUpdateService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly apiKeys: ApiKeysService,
    private readonly changes: ApiKeyChanges,
    private readonly outbox: RevocationOutbox,
    private readonly clock: Clock,
    private readonly limit: KeyChangeLimit,
    private readonly audit: AuditLog,
  ) {}

  async update(organizationId: string, publicKeyId: string, body: unknown, actor: RevocationActor): Promise<ApiKeyView> {
    const fixed: FieldError[] =
      body !== null && typeof body === 'object' && !Array.isArray(body)
        ? Object.keys(body).filter((f) => Object.hasOwn(FIXED, f)).map((field) => ({ field, code: 'immutable', message: FIXED[field] }))
        : [];
    if (fixed.length > 0) throw ProblemException.validation(fixed);
    const request = validateUpdate(body);
    const name = request.name?.trim();
    if (name !== undefined && name.length === 0) throw new InvalidApiKeyInput('name', 'length', 'must be 1 to 100 characters');
    const allowedIps = request.allowed_ips === undefined ? undefined : parseAllowedIpsField(request.allowed_ips);

    const found = await this.apiKeys.findInOrganization(organizationId, publicKeyId);
    if (!found) throw ProblemException.notFound('API key');
    await this.limit.spend(organizationId);
    let published = false;
    const updated = await this.db.transaction(async (tx) => {
      const key = await tx.getRepository(ApiKeyEntity).findOne({ where: { id: found.id, organizationId }, lock: { mode: 'pessimistic_write' } });
      const now = this.clock.now();
      if (!key) throw ProblemException.notFound('API key');
      if (!isUsable(key, now)) throw new ApiKeyNotActive(toView(key, now).status);
      const change: Partial<ApiKeyEntity> = {};
      if (name !== undefined && name !== key.name) {
        change.name = name;
        await this.audit.record(tx, keyChangeEntry('api_key.renamed', key, actor, now, { name, previous_name: key.name }));
      }
      if (allowedIps !== undefined && allowedIps.join(',') !== key.allowedIps.join(',')) {
        // The version, taken under the row lock, orders this change's event against the others.
        const version = key.allowedIpsVersion + 1;
        change.allowedIps = allowedIps;
        change.allowedIpsVersion = version;
        await this.outbox.enqueueInTransaction(tx, [allowedIpsChanged(key, allowedIps, version, new Date(now))]);
        await this.audit.record(
          tx,
          keyChangeEntry('api_key.allowed_ips_changed', key, actor, now, { allowed_ips: allowedIps, previous_allowed_ips: key.allowedIps, version }),
        );
        published = true;
      }
      if (Object.keys(change).length > 0) await tx.getRepository(ApiKeyEntity).update({ id: key.id }, change);
      return { key: Object.assign(key, change), changed: Object.keys(change).length > 0 };
    });
    if (published) this.outbox.committed();
    // Nothing changed, nothing to announce: a no-op PATCH costs the other instances nothing.
    if (updated.changed) await this.changes.announce(updated.key);
    return toView(updated.key, this.clock.now());
  }
}
