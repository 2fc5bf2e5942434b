import { DynamicModule, Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { KafkaEventTransport } from '@invoicing/event-bus';
import { AccessTokenGuard } from './nest/access-token.guard';
import { AccessTokenStrategy } from './nest/access-token.strategy';
import { RevocationFeed, RevocationFeedController, RevocationFeedOptions } from './revocation/revocation-feed';
import { RevocationView } from './revocation/revocation-view';
import { AccessTokenVerifier, VerifierOptions } from './verification/access-token-verifier';

export interface AuthGuardModuleOptions {
  verification: VerifierOptions;
  revocations: RevocationFeedOptions;
}

/**
 * Import once in a resource service's root module, next to `EventBusModule.forRoot` (event-bus), whose
 * Kafka transport the revocation feed subscribes on (the app must connect and start it:
 * `connectEventTransport`). Provides {@link AccessTokenGuard} (use with `@UseGuards(AccessTokenGuard)`
 * and `@Scopes(...)`) and {@link RevocationFeed} (its `ready` belongs in the service's readiness check).
 */
@Module({})
export class AuthGuardModule {
  static forRoot(options: AuthGuardModuleOptions): DynamicModule {
    return {
      module: AuthGuardModule,
      global: true,
      imports: [PassportModule.register({ session: false })],
      controllers: [RevocationFeedController],
      providers: [
        { provide: AccessTokenVerifier, useValue: new AccessTokenVerifier(options.verification) },
        { provide: RevocationView, useValue: new RevocationView() },
        {
          provide: RevocationFeed,
          useFactory: (view: RevocationView, transport: KafkaEventTransport) => new RevocationFeed(view, transport, options.revocations),
          inject: [RevocationView, KafkaEventTransport],
        },
        AccessTokenStrategy,
        AccessTokenGuard,
      ],
      exports: [AccessTokenGuard, AccessTokenStrategy, RevocationFeed, RevocationView, AccessTokenVerifier],
    };
  }
}
