import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DOMAIN_TOPIC, OrganizationProfile, validateDomainTopicEvent } from '@invoicing/contracts';
import { enqueueEvents } from '@invoicing/event-bus';
import { DataSource, EntityManager } from 'typeorm';
import { AuditActorAt, AuditLog } from '../audit/audit-log';
import type { AuditActor } from '../audit/audit-chain';
import { Clock } from '../common/clock';
import { RevocationOutbox } from '../revocation/revocation-outbox.service';
import { applyPatch, auditDataOf, changedFields, EMPTY_PROFILE, profileChangedEvent, profileView, StoredProfile } from './organization-profile';
import { parseProfilePatch, ProfilePatch } from './profile-fields';

interface Row {
  legal_name: string | null;
  address: StoredProfile['address'];
  vat_id: string | null;
  email: string | null;
  iban: string | null;
  bic: string | null;
  payment_terms: string | null;
  version: number;
  updated_at: Date | null;
}

const COLUMNS = 'legal_name, address, vat_id, email, iban, bic, payment_terms, version, updated_at';

function storedOf(row: Row): StoredProfile {
  const { updated_at, ...values } = row;
  return { ...values, version: Number(row.version), updatedAt: updated_at };
}

/**
 * Settings → Organization (ADR 0039): the organization's profile, read and changed for a signed-in
 * user of it. A change takes the profile's row lock, so concurrent changes apply one after the other,
 * each whole; it raises the version, and its audit record (`organization.profile_updated`) and its
 * event (`invoicing.settings.organization_profile_changed.v1`, through the outbox, on the domain
 * topic) commit with it or not at all. A change that changes nothing writes nothing.
 */
@Injectable()
export class OrganizationProfileService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly audit: AuditLog,
    private readonly outbox: RevocationOutbox,
    private readonly clock: Clock,
  ) {}

  /** The profile of the organization (uuid); every field null, version 0, before its first change. */
  async get(organizationId: string): Promise<OrganizationProfile> {
    const [row] = (await this.db.query(`SELECT ${COLUMNS} FROM auth.organization_profiles WHERE organization_id = $1`, [organizationId])) as Row[];
    return profileView(organizationId, row ? storedOf(row) : EMPTY_PROFILE);
  }

  /** Applies a PATCH body (checked whole first: 422 naming each field at fault, nothing changed). */
  async update(organizationId: string, body: unknown, actor: AuditActorAt): Promise<OrganizationProfile> {
    const patch = parseProfilePatch(body);
    if (Object.keys(patch).length === 0) return this.get(organizationId);
    let announced = false;
    const profile = await this.db.transaction(async (tx) => {
      const current = await this.lockedForChange(tx, organizationId, patch);
      const changed = changedFields(current, patch);
      if (changed.length === 0) return profileView(organizationId, current);
      const next = applyPatch(current, patch);
      const version = current.version + 1;
      const at = new Date(this.clock.now());
      await tx.query(
        `UPDATE auth.organization_profiles
            SET legal_name = $2, address = $3::jsonb, vat_id = $4, email = $5, iban = $6, bic = $7, payment_terms = $8, version = $9, updated_at = $10
          WHERE organization_id = $1`,
        [organizationId, next.legal_name, next.address === null ? null : JSON.stringify(next.address), next.vat_id, next.email, next.iban, next.bic, next.payment_terms, version, at],
      );
      const view = profileView(organizationId, { ...next, version, updatedAt: at });
      await this.audit.record(tx, {
        type: 'organization.profile_updated',
        organizationId,
        actor: { kind: actor.kind, id: actor.id } as AuditActor,
        clientAddress: actor.address,
        occurredAt: at,
        data: auditDataOf(current, next, changed, version),
      });
      const event = profileChangedEvent(view, changed);
      const check = validateDomainTopicEvent(event);
      if (!check.ok) throw new Error(`${event.type} fails its schema: ${check.errors.join('; ')}`);
      await enqueueEvents(tx, 'auth', DOMAIN_TOPIC, [{ id: event.id, key: event.subject, payload: event }]);
      announced = true;
      return view;
    });
    // The relay publishes what has committed at once, not at its next poll.
    if (announced) this.outbox.committed();
    return profile;
  }

  /**
   * The profile's row, locked for the rest of the transaction (`FOR UPDATE`): a concurrent change
   * waits here, then reads what the one before it committed. An organization without a row gets one
   * (version 0) only when the patch changes something of the empty profile; two first changes at
   * once both insert, one of the inserts does nothing, and both then lock the one row.
   */
  private async lockedForChange(tx: EntityManager, organizationId: string, patch: ProfilePatch): Promise<StoredProfile> {
    const locked = () => tx.query(`SELECT ${COLUMNS} FROM auth.organization_profiles WHERE organization_id = $1 FOR UPDATE`, [organizationId]) as Promise<Row[]>;
    const [row] = await locked();
    if (row) return storedOf(row);
    if (changedFields(EMPTY_PROFILE, patch).length === 0) return EMPTY_PROFILE;
    await tx.query(`INSERT INTO auth.organization_profiles (organization_id) VALUES ($1) ON CONFLICT (organization_id) DO NOTHING`, [organizationId]);
    const [created] = await locked();
    if (!created) throw new Error('the organization profile just written cannot be read back');
    return storedOf(created);
  }
}
