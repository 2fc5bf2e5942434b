import { Controller, Get, Header, Inject } from '@nestjs/common';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { AuthorizationServerMetadata, buildAuthorizationServerMetadata } from './authorization-server-metadata';

/** RFC 8414 discovery, served at the base URL through the gateway (route in GATEWAY_ROUTES). */
@Controller('.well-known')
export class AuthorizationServerMetadataController {
  private readonly metadata: AuthorizationServerMetadata;

  constructor(@Inject(AUTH_CONFIG) config: AuthConfig) {
    this.metadata = buildAuthorizationServerMetadata(config.JWT_ISSUER);
  }

  /** Static for the life of a deployment: caches and clients may keep it for an hour. */
  @Get('oauth-authorization-server')
  @Header('Cache-Control', 'public, max-age=3600')
  metadataDocument(): AuthorizationServerMetadata {
    return this.metadata;
  }
}
