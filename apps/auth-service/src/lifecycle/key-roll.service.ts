import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { REFRESH_TOKEN_TTL_SECONDS, RollApiKeyRequest } from '@invoicing/contracts';
import { ProblemException } from '@invoicing/service-kit';
import { DataSource } from 'typeorm';
import { uuidv7 } from 'uuidv7';
import { Clock } from '../common/clock';
import { ApiKeyEntity, isUsable } from '../keys/api-key.entity';
import { ApiKeyNotActive, ApiKeysService, ApiKeyView, toView } from '../keys/api-keys.service';
import { hashCredential, newSecretKey } from '../keys/credential-format';
import { RevocationOutbox } from '../revocation/revocation-outbox.service';
import { RevocationActor, SessionStore } from '../sessions/session-store';
import { AuditLog, keyChangeEntry } from '../audit/audit-log';
import { ApiKeyChanges } from './api-key-changes';
import { KeyChangeLimit } from './key-change-limit';
import { apiKeysChanged } from './key-events';

/**
 * The roll's answer: the key, its new secret (shown this once) and whether every session was ended
 * (false when not asked, and when asked but Redis could not be reached: see {@link KeyRollService.roll}).
 */
export type RolledApiKey = ApiKeyView & { client_secret: string; sessions_ended: boolean };

/**
 * Rolling a key's secret (ADR 0023): a new secret replaces the current one, which keeps
 * working beside it until `previous_secret_expires_in` seconds from now (0: not at all), so an
 * integration can deploy the new secret before the old one dies. The Client ID, the scopes and the
 * live sessions stay as they are, unless `end_sessions` asks to end every session at once (a leak).
 * Only two secrets at a time: rolling during an overlap drops the secret before the previous one.
 */
@Injectable()
export class KeyRollService {
  private readonly logger = new Logger(KeyRollService.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly apiKeys: ApiKeysService,
    private readonly changes: ApiKeyChanges,
    private readonly sessions: SessionStore,
    private readonly outbox: RevocationOutbox,
    private readonly clock: Clock,
    private readonly limit: KeyChangeLimit,
    private readonly audit: AuditLog,
  ) {}

  async roll(organizationId: string, publicKeyId: string, request: RollApiKeyRequest, actor: RevocationActor): Promise<RolledApiKey> {
    if (request.end_sessions && request.previous_secret_expires_in > 0) {
      // Ending the sessions is for a leak; an overlap would let the leaked secret open new ones.
      throw ProblemException.validation([
        { field: 'end_sessions', code: 'requires_no_overlap', message: 'ends the sessions of a leaked secret: set previous_secret_expires_in to 0 with it' },
      ]);
    }
    const found = await this.apiKeys.findInOrganization(organizationId, publicKeyId);
    if (!found) throw ProblemException.notFound('API key');
    await this.limit.spend(organizationId);
    const secret = newSecretKey();
    const rolled = await this.db.transaction(async (tx) => {
      // The row locked, so a concurrent roll or revocation goes after this one, not beside it.
      const key = await tx.getRepository(ApiKeyEntity).findOne({ where: { id: found.id, organizationId }, lock: { mode: 'pessimistic_write' } });
      const now = this.clock.now();
      if (!key) throw ProblemException.notFound('API key');
      if (!isUsable(key, now)) throw new ApiKeyNotActive(toView(key, now).status);
      const overlapEnds = request.previous_secret_expires_in > 0 ? new Date(now + request.previous_secret_expires_in * 1000) : null;
      const change: Partial<ApiKeyEntity> = {
        secretGeneration: key.secretGeneration + 1,
        secretHash: hashCredential(secret),
        secretLastUsedAt: null,
        previousSecretHash: overlapEnds ? key.secretHash : null,
        previousSecretExpiresAt: overlapEnds,
        previousSecretLastUsedAt: overlapEnds ? key.secretLastUsedAt : null,
      };
      await tx.getRepository(ApiKeyEntity).update({ id: key.id }, change);
      await this.audit.record(
        tx,
        keyChangeEntry('api_key.rolled', key, actor, now, {
          previous_secret_expires_at: overlapEnds ? overlapEnds.toISOString() : null,
          end_sessions: request.end_sessions === true,
        }),
      );
      // Told to the owner's webhook endpoints (api_key.secret_rolled), committed with the roll.
      await this.outbox.enqueueKeyChanges(tx, await apiKeysChanged(tx, [key.id], 'secret_rolled', new Date(now)));
      return Object.assign(key, change);
    });
    this.outbox.committed();
    // Every instance drops its cached copy: the new secret works everywhere, and with no overlap
    // the old one fails everywhere, from this answer on.
    await this.changes.announce(rolled);
    // Sessions are ended after the roll, not before: ended first, a holder of the old secret could
    // open a new session in between that would outlive the call. With the old secret ended at once,
    // the secret floor also refuses a session to an exchange that checked the old secret on a row
    // read before the roll (a cache, a read in flight) and comes to open its session only now.
    let sessionsEnded = false;
    if (request.end_sessions) sessionsEnded = await this.endSessions(rolled);
    else if (request.previous_secret_expires_in === 0) await this.raiseFloor(rolled);
    return { ...toView(rolled, this.clock.now()), client_secret: secret, sessions_ended: sessionsEnded };
  }

  /**
   * Every session of the key, ended with one event (sessions_revoked, reason secret_rolled). The
   * roll has committed by now and its secret must reach the caller, so a failure here is reported
   * in the answer (`sessions_ended: false`), not as an error that would lose the secret. Once
   * Redis has recorded the event it is published even if the outbox insert fails (the sweeper).
   */
  /** Best effort: without it, the bound is the announcement to every instance (ApiKeyChanges). */
  private async raiseFloor(key: ApiKeyEntity): Promise<void> {
    try {
      await this.sessions.raiseSecretFloor(key.id, key.secretGeneration);
    } catch (e) {
      this.logger.warn({ msg: 'secret rolled, but its floor could not be raised in Redis', api_key_id: key.id, error: String(e) });
    }
  }

  private async endSessions(key: ApiKeyEntity): Promise<boolean> {
    try {
      const pending = await this.sessions.revokeAll({
        apiKeyUuid: key.id,
        organizationId: key.organizationId,
        clientId: key.clientId,
        reason: 'secret_rolled',
        markKeyRevoked: false,
        secretFloor: key.secretGeneration,
        now: this.clock.now(),
        eventId: uuidv7(),
        markerTtlMs: (REFRESH_TOKEN_TTL_SECONDS + 86400) * 1000,
      });
      await this.outbox.enqueue(pending);
      return true;
    } catch (e) {
      this.logger.warn({ msg: 'secret rolled, but its sessions could not be ended', api_key_id: key.id, error: String(e) });
      return false;
    }
  }
}
