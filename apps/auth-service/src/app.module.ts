import { ExposureService } from './secret-scanning/exposure.service';
import { AuditController } from './audit/audit.controller';
import { AuditLog } from './audit/audit-log';
import { AuditFailureDigest } from './audit/failure-digest';
import { ApiKeyChanges } from './lifecycle/api-key-changes';
import { KeyChangeLimit } from './lifecycle/key-change-limit';
import { KeyExpirySweep } from './lifecycle/key-expiry.sweep';
import { KeyRollService } from './lifecycle/key-roll.service';
import { KeyUpdateService } from './lifecycle/key-update.service';
import { DynamicModule, Module } from '@nestjs/common';
import { EventBusModule } from '@invoicing/event-bus';
import { WebhookAuditModule } from './webhook-audit/webhook-endpoint-audit';
import { AccountController } from './settings/account.controller';
import { ApiDocsController } from './api-docs/api-docs.controller';
import { AuthorizationServerMetadataController } from './oauth/authorization-server-metadata.controller';
import { AccountsService } from './settings/accounts.service';
import { CsrfGuard, DashboardSessionGuard } from './settings/dashboard.guards';
import { DashboardSessions } from './settings/dashboard-sessions';
import { SessionCookies } from './settings/session-cookies';
import { PasswordHasher } from './settings/password-hasher';
import { ApiKeyCache } from './keys/api-key-cache';
import { ApiKeysService } from './keys/api-keys.service';
import { LastUsedRecorder } from './keys/last-used-recorder';
import type { AuthConfig } from './config/config';
import { InfrastructureModule } from './infrastructure.module';
import { TokenPairFactory } from './oauth/token-pair';
import { ClientCredentialsGrant } from './oauth/grants/client-credentials.grant';
import { GrantRegistry } from './oauth/grants/grant-registry';
import { RefreshTokenGrant } from './oauth/grants/refresh-token.grant';
import { ApiKeyRevocationService } from './revocation/api-key-revocation.service';
import { RevocationRelay } from './revocation/outbox-relay';
import { RevocationOutbox } from './revocation/revocation-outbox.service';
import { TokenRevocationService } from './oauth/token-revocation.service';
import { SessionStore } from './sessions/session-store';
import { AccessTokenSigner } from './oauth/access-token-signer';
import { SettingsController } from './settings/settings.controller';
import { WebhookSettingsController } from './settings/webhooks/webhook-settings.controller';
import { WebhookSettingsProxy } from './settings/webhooks/webhook-settings.proxy';
import { WebhookAccessTokens } from './settings/webhooks/webhook-access-token';
import { WebhookServiceClient } from './settings/webhooks/webhook-service.client';
import { ClientAuthThrottle } from './oauth/client-auth-throttle';
import { FailureThrottle } from './sessions/failure-throttle';
import { ClientAuthenticator } from './oauth/client-authenticator';
import { TokenController } from './oauth/token.controller';
import { OrganizationProfileController } from './organization/organization-profile.controller';
import { OrganizationProfileService } from './organization/organization-profile.service';

@Module({})
export class AppModule {
  static forRoot(config: AuthConfig): DynamicModule {
    return {
      module: AppModule,
      // The event transport (once, here) serves the Kafka subscriptions: the webhook endpoints' audit.
      imports: [InfrastructureModule.forRoot(config), EventBusModule.forRoot({ brokers: config.KAFKA_BROKERS }), WebhookAuditModule],
      controllers: [
        TokenController,
        AccountController,
        SettingsController,
        WebhookSettingsController,
        OrganizationProfileController,
        AuditController,
        ApiDocsController,
        AuthorizationServerMetadataController,
      ],
      providers: [
        ApiKeysService,
        ApiKeyCache,
        LastUsedRecorder,
        FailureThrottle,
        PasswordHasher,
        DashboardSessions,
        SessionCookies,
        AccountsService,
        DashboardSessionGuard,
        CsrfGuard,
        ApiKeyRevocationService,
        SessionStore,
        AccessTokenSigner,
        TokenPairFactory,
        ClientAuthThrottle,
        ClientAuthenticator,
        ClientCredentialsGrant,
        RefreshTokenGrant,
        GrantRegistry,
        TokenRevocationService,
        RevocationOutbox,
        RevocationRelay,
        ApiKeyChanges,
        KeyRollService,
        KeyUpdateService,
        KeyExpirySweep,
        KeyChangeLimit,
        AuditLog,
        AuditFailureDigest,
        ExposureService,
        WebhookAccessTokens,
        WebhookServiceClient,
        WebhookSettingsProxy,
        OrganizationProfileService,
      ],
    };
  }
}

/** The CLI needs the database only. */
@Module({})
export class CliModule {
  static forRoot(config: AuthConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [InfrastructureModule.forRoot(config)],
      providers: [ApiKeysService, AuditLog],
    };
  }
}

/** `verify-audit` reads the audit log only. */
@Module({})
export class AuditCliModule {
  static forRoot(config: AuthConfig): DynamicModule {
    return {
      module: AuditCliModule,
      imports: [InfrastructureModule.forRoot(config)],
      providers: [AuditLog],
    };
  }
}
