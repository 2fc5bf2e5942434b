import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { newId, parsePublicId, toPublicId } from '@invoicing/contracts';
import { PlatformError, ProblemException } from '@invoicing/service-kit';
import { DataSource, QueryFailedError } from 'typeorm';
import { AUTH_CONFIG, AuthConfig, derivedSecrets } from '../config/config';
import { ApiKeysService } from '../keys/api-keys.service';
import { AuditLog } from '../audit/audit-log';
import { AuditFailureDigest } from '../audit/failure-digest';
import { OrganizationEntity } from '../keys/organization.entity';
import { createHmac } from 'node:crypto';
import { throttleAddress } from '../common/throttle-address';
import { FailureThrottle, ThrottlePolicy, ThrottleSubject } from '../sessions/failure-throttle';
import type { LoginRequest, SignupRequest } from '@invoicing/contracts';
import type { DashboardUser } from './dashboard-sessions';
import { PasswordHasher } from './password-hasher';
import { passwordProblem } from './password-policy';
import { UserEntity } from './user.entity';

export interface AccountView {
  user: { id: string; email: string; created_at: string };
  organization: { id: string; name: string };
}

/** Sign-up and log-in for the settings area. */
@Injectable()
export class AccountsService {
  /** Keys the email digests of the throttle (derived from the signing key: no new secret to hand out). */
  private readonly emailKey: Buffer;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly passwords: PasswordHasher,
    private readonly keys: ApiKeysService,
    private readonly throttle: FailureThrottle,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    private readonly audit: AuditLog,
    private readonly failures: AuditFailureDigest,
  ) {
    this.emailKey = derivedSecrets(config, 'invoicing throttle email v1').signing;
  }

  /**
   * Creates the organization and its first user together. A taken email is refused (409: people
   * need to know), and each refusal counts against the caller's address like a failed log-in, so
   * that finding out which emails are registered costs here what guessing them at log-in costs.
   */
  async signup(request: SignupRequest, address: string): Promise<{ user: DashboardUser; view: AccountView }> {
    const email = request.email.trim().toLowerCase();
    // Checked before the throttle and the hash: a refused password costs neither, and tells nothing
    // about which emails are registered.
    const problem = passwordProblem(request.password, { email, organizationName: request.organization_name });
    if (problem) throw ProblemException.validation([{ field: 'password', code: problem.code, message: problem.message }]);
    const perAddress: ThrottlePolicy = { refuse: [this.addressSubject(address)], windowSeconds: this.config.LOGIN_THROTTLE_WINDOW_SECONDS };
    await this.reserveAttempt(perAddress, 'sign-ups');
    let refused = false;
    try {
      return await this.createAccount(request, email, address);
    } catch (e) {
      refused = e instanceof PlatformError && e.status === 409;
      throw e;
    } finally {
      await this.throttle.settle(perAddress, !refused);
    }
  }

  private async createAccount(request: SignupRequest, email: string, address: string): Promise<{ user: DashboardUser; view: AccountView }> {
    const passwordHash = await this.passwords.hash(request.password);
    const now = new Date();
    let created: { org: OrganizationEntity; user: UserEntity };
    try {
      created = await this.db.transaction(async (tx) => {
        const org = await this.keys.createOrganization(request.organization_name, now, tx);
        const user: UserEntity = { id: parsePublicId('usr', newId('usr'))!, organizationId: org.id, email, passwordHash, createdAt: now };
        await tx.getRepository(UserEntity).insert(user);
        // The organization's first record: who created it, from where (never the password).
        await this.audit.record(tx, {
          type: 'account.signed_up',
          organizationId: org.id,
          actor: { kind: 'user', id: toPublicId('usr', user.id) },
          clientAddress: address,
          occurredAt: now,
          data: { email },
        });
        return { org, user };
      });
    } catch (e) {
      // An organization name at fault is the key service's InvalidApiKeyInput: a 422 as it is.
      if (e instanceof QueryFailedError && (e as QueryFailedError & { constraint?: string }).constraint === 'users_email_unique') {
        throw new ProblemException(409, 'An account with this email already exists.', [
          { field: 'email', code: 'duplicate', message: 'is already registered' },
        ]);
      }
      throw e;
    }
    const { org, user } = created;
    return { user: { userId: user.id, organizationId: org.id, email }, view: view(user, org) };
  }

  /**
   * One answer (401) for an unknown email and a wrong password. Throttled per email at this address
   * and per address (ADR 0022): the right password from another address still signs in, whatever a
   * stranger tried. Failures for one email across addresses only raise an alert.
   */
  async login(request: LoginRequest, address: string): Promise<{ user: DashboardUser; view: AccountView }> {
    const email = request.email.trim().toLowerCase();
    // The email as a keyed digest: the throttle's Redis keys and alert lines carry no address book,
    // and a list of candidate emails does not reverse them.
    const who = createHmac('sha256', this.emailKey).update(email).digest('base64url').slice(0, 22);
    const policy: ThrottlePolicy = {
      refuse: [
        this.addressSubject(address),
        { key: `login-email-ip:${who}:${throttleAddress(address)}`, limit: this.config.LOGIN_THROTTLE_MAX_FAILURES_PER_EMAIL_ADDRESS },
      ],
      watch: [{ key: `login-email:${who}`, limit: this.config.LOGIN_THROTTLE_ALERT_FAILURES_PER_EMAIL }],
      windowSeconds: this.config.LOGIN_THROTTLE_WINDOW_SECONDS,
    };
    await this.reserveAttempt(policy, 'log-ins');
    let user: UserEntity | null = null;
    let ok = false;
    let alerted: ThrottleSubject[] = [];
    try {
      user = await this.db.getRepository(UserEntity).findOneBy({ email });
      ok = await this.passwords.verify(user?.passwordHash ?? null, request.password);
    } finally {
      alerted = await this.throttle.settle(policy, ok);
    }
    if (!user || !ok) {
      // Recorded for the organization the email belongs to; an unknown email belongs to none. A
      // record that cannot be written must not turn the 401 into something that tells more.
      if (user) await this.recordFailedLogin(user, address, alerted.length > 0);
      throw new ProblemException(401, 'Email or password is incorrect.');
    }
    const org = await this.db.getRepository(OrganizationEntity).findOneByOrFail({ id: user.organizationId });
    // A session starts only once its log-in is recorded.
    await this.audit.recordNow({ type: 'account.logged_in', organizationId: org.id, actor: { kind: 'user', id: toPublicId('usr', user.id) }, clientAddress: address, data: {} });
    return { user: { userId: user.id, organizationId: org.id, email }, view: view(user, org) };
  }

  /**
   * A failed log-in for a registered email, in its organization's log, through the failure digest
   * (ADR 0035): the account's first failure of the window and its alert at once, every failure in
   * the window's summary. The actor is unknown (who typed the wrong password is exactly what nobody
   * knows; the account is in `data`). A stranger failing log-ins for a known email from thousands of
   * addresses adds a handful of records, not one per address.
   */
  private async recordFailedLogin(user: UserEntity, address: string, alerted: boolean): Promise<void> {
    const entry = { organizationId: user.organizationId, actor: { kind: 'user' as const, id: null }, clientAddress: address };
    const data = { user_id: toPublicId('usr', user.id) };
    await this.failures.failed({ organizationId: user.organizationId, kind: 'account', id: data.user_id }, address, [
      { ...entry, type: 'account.login_failed', data },
      ...(alerted
        ? [
            {
              ...entry,
              type: 'account.login_failures_alert' as const,
              data: { ...data, failures_across_addresses: this.config.LOGIN_THROTTLE_ALERT_FAILURES_PER_EMAIL, window_seconds: this.config.LOGIN_THROTTLE_WINDOW_SECONDS },
            },
          ]
        : []),
    ]);
  }

  /** After the session has ended: recorded quietly (the log-out has happened whatever the log says). */
  async loggedOut(user: DashboardUser, address: string): Promise<void> {
    await this.audit.recordQuietly({ type: 'account.logged_out', organizationId: user.organizationId, actor: { kind: 'user', id: toPublicId('usr', user.userId) }, clientAddress: address, data: {} });
  }

  /** Failed log-ins and refused sign-ups share one budget per address. */
  private addressSubject(address: string) {
    return { key: `login-ip:${throttleAddress(address)}`, limit: this.config.LOGIN_THROTTLE_MAX_FAILURES_PER_ADDRESS };
  }

  /** Takes the attempt from the budgets (FailureThrottle.reserve), or refuses with 429 when one is spent. */
  private async reserveAttempt(policy: ThrottlePolicy, what: string): Promise<void> {
    const retryAfter = await this.throttle.reserve(policy);
    if (retryAfter !== null) {
      throw new ProblemException(429, `Too many failed ${what} from this address; retry in ${retryAfter} seconds.`, undefined, {
        'Retry-After': String(retryAfter),
      });
    }
  }

  async me(user: DashboardUser): Promise<AccountView> {
    const [row, org] = await Promise.all([
      this.db.getRepository(UserEntity).findOneBy({ id: user.userId, organizationId: user.organizationId }),
      this.db.getRepository(OrganizationEntity).findOneBy({ id: user.organizationId }),
    ]);
    if (!row || !org) throw new ProblemException(401, 'Sign in to continue.');
    return view(row, org);
  }
}

function view(user: UserEntity, org: OrganizationEntity): AccountView {
  return {
    user: { id: toPublicId('usr', user.id), email: user.email, created_at: user.createdAt.toISOString() },
    organization: { id: toPublicId('org', org.id), name: org.name },
  };
}
