import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { REFRESH_TOKEN_TTL_SECONDS } from '@invoicing/contracts';
import { ProblemException } from '@invoicing/service-kit';
import { DataSource } from 'typeorm';
import { uuidv7 } from 'uuidv7';
import { Clock } from '../common/clock';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { ApiKeyCache } from '../keys/api-key-cache';
import { ApiKeyEntity, isUsable, livePreviousSecret } from '../keys/api-key.entity';
import { hashCredential, sameHash } from '../keys/credential-format';
import { RevocationOutbox } from '../revocation/revocation-outbox.service';
import { SessionStore } from '../sessions/session-store';
import {
  candidateTokens,
  GithubLabelEntry,
  GithubReportItem,
  labelResponse,
  parseGithubReport,
  verifyGithubSignature,
} from './github-report';

const SIGNATURE_DETAIL = {
  missing_signature: 'The Github-Public-Key-Identifier and Github-Public-Key-Signature headers are required.',
  unknown_key: 'The Github-Public-Key-Identifier names no key this service knows.',
  bad_signature: 'The Github-Public-Key-Signature does not verify over the request body.',
} as const;

/**
 * Leaked-secret reports in GitHub's secret-scanning partner format (ADR 0025). A report
 * is acted on only once its signature verifies over the exact bytes received and it parses; then:
 * - a token that is not one of our Secret Keys (prefix and checksum) is a false positive, with no
 *   store look-up;
 * - a Secret Key we issued is a true positive, whatever its state;
 * - one that still authenticates (a usable key's current secret, or its previous one during an
 *   overlap) revokes its key at once: reason `exposed`, every session ended, every resource service
 *   refusing its access tokens within a second, the report's URL kept for the owner's banner and in
 *   the audit record. Revoked rather than rolled: a roll would hand a new secret to nobody (the
 *   owner is not in this conversation), and the leaked one must stop working now.
 * A revoked or expired key's secret changes nothing.
 */
/** The endpoint's answer when no GitHub keys are configured. */
export const NOT_ACCEPTED = (): ProblemException => new ProblemException(404, 'Secret-scanning reports are not accepted by this deployment.');

@Injectable()
export class ExposureService {
  private readonly logger = new Logger(ExposureService.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    private readonly sessions: SessionStore,
    private readonly outbox: RevocationOutbox,
    private readonly cache: ApiKeyCache,
    private readonly clock: Clock,
  ) {}

  /** Whether the deployment configured GitHub's keys; without them the endpoint answers 404 to anything. */
  acceptsReports(): boolean {
    return this.config.githubSecretScanningKeys !== null;
  }

  async report(rawBody: Buffer, keyIdentifier: string | undefined, signature: string | undefined): Promise<GithubLabelEntry[]> {
    const keys = this.config.githubSecretScanningKeys;
    if (!keys) throw NOT_ACCEPTED();
    const check = verifyGithubSignature(keys, rawBody, keyIdentifier, signature);
    if (!check.ok) throw new ProblemException(check.status, SIGNATURE_DETAIL[check.reason]);
    const parsed = parseGithubReport(rawBody);
    if (!parsed.ok) throw new ProblemException(parsed.status, parsed.message);

    const candidates = candidateTokens(parsed.items);
    const issued = new Set<string>();
    if (candidates.length > 0) {
      const hashes = candidates.map((t) => hashCredential(t));
      // By secret, across organizations: a report names secrets, not owners. Both columns are indexed.
      const keys = await this.db
        .getRepository(ApiKeyEntity)
        .createQueryBuilder('k')
        .where('k.secret_hash = ANY(:hashes) OR k.previous_secret_hash = ANY(:hashes)', { hashes })
        .getMany();
      const now = this.clock.now();
      let failed = 0;
      for (const token of candidates) {
        const hash = hashCredential(token);
        const key = keys.find((k) => sameHash(k.secretHash, hash) || (k.previousSecretHash !== null && sameHash(k.previousSecretHash, hash)));
        if (!key) continue;
        issued.add(token);
        const live = sameHash(key.secretHash, hash) || (livePreviousSecret(key, now) !== null && sameHash(key.previousSecretHash!, hash));
        if (!live || !isUsable(key, now)) continue;
        // One key that cannot be revoked now (Redis down) must not spare the others in the report.
        try {
          await this.revoke(key, firstReport(parsed.items, token));
        } catch (e) {
          failed += 1;
          this.logger.error({ msg: 'could not revoke an exposed key; the report is answered 503 for GitHub to send it again', api_key_id: key.id, error: String(e) });
        }
      }
      // What was revoked stays revoked; a retried report finds those keys revoked and changes nothing.
      if (failed > 0) throw ProblemException.unavailable(`${failed} reported key(s) could not be revoked yet; send the report again.`);
    }
    return labelResponse(parsed.items, issued);
  }

  private async revoke(key: ApiKeyEntity, item: GithubReportItem): Promise<void> {
    const pending = await this.sessions.revokeAll({
      apiKeyUuid: key.id,
      organizationId: key.organizationId,
      clientId: key.clientId,
      reason: 'exposed',
      markKeyRevoked: true,
      now: this.clock.now(),
      eventId: uuidv7(),
      markerTtlMs: (REFRESH_TOKEN_TTL_SECONDS + 86400) * 1000,
      actor: { kind: 'system', id: null, address: null, data: { url: item.url, source: item.source } },
    });
    // Other instances are held by the marker just written (ApiKeyCache); this one forgets at once.
    this.cache.forget(key);
    // The key is unusable from here; if the outbox insert fails, the sweeper finishes it shortly.
    if (!(await this.outbox.enqueue(pending))) this.logger.warn({ msg: 'exposed key revoked; its event is kept pending for the sweeper', api_key_id: key.id });
  }
}

function firstReport(items: readonly GithubReportItem[], token: string): GithubReportItem {
  return items.find((i) => i.token === token)!;
}
