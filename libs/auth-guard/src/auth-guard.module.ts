import { DynamicModule, Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { AccessTokenGuard } from './nest/access-token.guard';
import { AccessTokenStrategy } from './nest/access-token.strategy';
import { RevocationFeed, RevocationFeedOptions } from './revocation/revocation-feed';
import { RevocationView } from './revocation/revocation-view';
import { AccessTokenVerifier, VerifierOptions } from './verification/access-token-verifier';

export interface AuthGuardModuleOptions {
  verification: VerifierOptions;
  revocations: RevocationFeedOptions;
}

/**
 * Import once in a resource service's root module. Provides {@link AccessTokenGuard} (use with
 * `@UseGuards(AccessTokenGuard)` and `@Scopes(...)`) and {@link RevocationFeed} (its `ready` belongs in
 * the service's readiness check).
 */
@Module({})
export class AuthGuardModule {
  static forRoot(options: AuthGuardModuleOptions): DynamicModule {
    return {
      module: AuthGuardModule,
      global: true,
      imports: [PassportModule.register({ session: false })],
      providers: [
        { provide: AccessTokenVerifier, useValue: new AccessTokenVerifier(options.verification) },
        { provide: RevocationView, useValue: new RevocationView() },
        {
          provide: RevocationFeed,
          useFactory: (view: RevocationView) => new RevocationFeed(view, options.revocations),
          inject: [RevocationView],
        },
        AccessTokenStrategy,
        AccessTokenGuard,
      ],
      exports: [AccessTokenGuard, AccessTokenStrategy, RevocationFeed, RevocationView, AccessTokenVerifier],
    };
  }
}
