import { DynamicModule, Module } from '@nestjs/common';
import { AccountController } from './accounts/account.controller';
import { ApiDocsController } from './api-docs/api-docs.controller';
import { AuthorizationServerMetadataController } from './discovery/authorization-server-metadata.controller';
import { AccountsService } from './accounts/accounts.service';
import { CsrfGuard, DashboardSessionGuard } from './accounts/dashboard.guards';
import { DashboardSessions } from './accounts/dashboard-sessions';
import { PasswordHasher } from './accounts/password-hasher';
import { ApiKeyCache } from './api-keys/api-key-cache';
import { ApiKeysService } from './api-keys/api-keys.service';
import { LastUsedRecorder } from './api-keys/last-used-recorder';
import type { AuthConfig } from './config';
import { InfrastructureModule } from './infrastructure.module';
import { TokenPairFactory } from './issuance/token-pair';
import { RefreshService } from './refresh/refresh.service';
import { ApiKeyRevocationService } from './revocation/api-key-revocation.service';
import { RevocationRelay } from './revocation/outbox-relay';
import { RevocationOutbox } from './revocation/revocation-outbox.service';
import { TokenRevocationService } from './revocation/token-revocation.service';
import { SessionStore } from './sessions/session-store';
import { AccessTokenSigner } from './signing/access-token-signer';
import { SettingsController } from './settings/settings.controller';
import { ClientAuthThrottle } from './throttling/client-auth-throttle';
import { FailureThrottle } from './throttling/failure-throttle';
import { ClientAuthenticator } from './token/client-authenticator';
import { TokenController } from './token/token.controller';
import { TokenExchangeService } from './token/token-exchange.service';

@Module({})
export class AppModule {
  static forRoot(config: AuthConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [InfrastructureModule.forRoot(config)],
      controllers: [TokenController, AccountController, SettingsController, ApiDocsController, AuthorizationServerMetadataController],
      providers: [
        ApiKeysService,
        ApiKeyCache,
        LastUsedRecorder,
        FailureThrottle,
        PasswordHasher,
        DashboardSessions,
        AccountsService,
        DashboardSessionGuard,
        CsrfGuard,
        ApiKeyRevocationService,
        SessionStore,
        AccessTokenSigner,
        TokenPairFactory,
        ClientAuthThrottle,
        ClientAuthenticator,
        TokenExchangeService,
        TokenRevocationService,
        RefreshService,
        RevocationOutbox,
        RevocationRelay,
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
      providers: [ApiKeysService],
    };
  }
}
