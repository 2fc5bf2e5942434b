import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { newId, parsePublicId, toPublicId } from '@invoicing/contracts';
import { ProblemException } from '@invoicing/service-kit';
import { DataSource, QueryFailedError } from 'typeorm';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { ApiKeysService, InvalidApiKeyInput } from '../keys/api-keys.service';
import { OrganizationEntity } from '../keys/organization.entity';
import { FailureThrottle, ThrottleSubject } from '../sessions/failure-throttle';
import type { LoginRequest, SignupRequest } from '@invoicing/contracts';
import type { DashboardUser } from './dashboard-sessions';
import { PasswordHasher } from './password-hasher';
import { UserEntity } from './user.entity';

export interface AccountView {
  user: { id: string; email: string; created_at: string };
  organization: { id: string; name: string };
}

/** Sign-up and log-in for the settings area. */
@Injectable()
export class AccountsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly passwords: PasswordHasher,
    private readonly keys: ApiKeysService,
    private readonly throttle: FailureThrottle,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  /** Creates the organization and its first user together. */
  async signup(request: SignupRequest): Promise<{ user: DashboardUser; view: AccountView }> {
    const email = request.email.trim().toLowerCase();
    const passwordHash = await this.passwords.hash(request.password);
    const now = new Date();
    let created: { org: OrganizationEntity; user: UserEntity };
    try {
      created = await this.db.transaction(async (tx) => {
        const org = await this.keys.createOrganization(request.organization_name, now, tx);
        const user: UserEntity = { id: parsePublicId('usr', newId('usr'))!, organizationId: org.id, email, passwordHash, createdAt: now };
        await tx.getRepository(UserEntity).insert(user);
        return { org, user };
      });
    } catch (e) {
      if (e instanceof InvalidApiKeyInput) throw ProblemException.validation([{ field: e.field, code: e.code, message: e.message }]);
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

  /** One answer (401) for an unknown email and a wrong password; throttled per email and address. */
  async login(request: LoginRequest, address: string): Promise<{ user: DashboardUser; view: AccountView }> {
    const email = request.email.trim().toLowerCase();
    const subjects: ThrottleSubject[] = [
      { key: `login-ip:${address}`, limit: this.config.LOGIN_THROTTLE_MAX_FAILURES_PER_ADDRESS },
      { key: `login-email:${email}`, limit: this.config.LOGIN_THROTTLE_MAX_FAILURES_PER_EMAIL },
    ];
    const retryAfter = await this.throttle.retryAfter(subjects);
    if (retryAfter !== null) {
      throw new ProblemException(429, `Too many failed log-ins; retry in ${retryAfter} seconds.`, undefined, {
        'Retry-After': String(retryAfter),
      });
    }
    const user = await this.db.getRepository(UserEntity).findOneBy({ email });
    const ok = await this.passwords.verify(user?.passwordHash ?? null, request.password);
    if (!user || !ok) {
      await this.throttle.recordFailure(subjects, this.config.LOGIN_THROTTLE_WINDOW_SECONDS);
      throw new ProblemException(401, 'Email or password is incorrect.');
    }
    const org = await this.db.getRepository(OrganizationEntity).findOneByOrFail({ id: user.organizationId });
    return { user: { userId: user.id, organizationId: org.id, email }, view: view(user, org) };
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
