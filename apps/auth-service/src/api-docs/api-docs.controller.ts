import { Controller, Get, Header, Inject } from '@nestjs/common';
import { buildOpenApiDocument } from '@invoicing/contracts';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { renderApiDocs } from './render-api-docs';

/** The public API's OpenAPI 3.1 document and a readable page of it (contract section 10). */
@Controller('api/v1')
export class ApiDocsController {
  private readonly document: Record<string, unknown>;
  private readonly page: string;

  constructor(@Inject(AUTH_CONFIG) config: AuthConfig) {
    // The issuer is the public base URL, in every mode.
    this.document = buildOpenApiDocument({ serverUrl: config.JWT_ISSUER });
    this.page = renderApiDocs(this.document);
  }

  @Get('openapi.json')
  @Header('Cache-Control', 'public, max-age=300')
  openapi(): Record<string, unknown> {
    return this.document;
  }

  @Get('docs')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
  @Header('Cache-Control', 'public, max-age=300')
  docs(): string {
    return this.page;
  }
}
