import { Controller, Get, Header, Headers, Inject, Param, Res } from '@nestjs/common';
import { buildAsyncApiDocument, buildOpenApiDocument } from '@invoicing/contracts';
import { ProblemException } from '@invoicing/service-kit';
import type { FastifyReply } from 'fastify';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { buildDocsSite, DocsSite, DOCS_CSP, readRedocBundle } from './docs-site';
import { buildEventsPage } from './events-page';
import { respondWithAsset } from './static-asset';

/**
 * The public API's OpenAPI 3.1 document and its reference page, rendered by Redoc (docs/api.md
 * section 10, ADR 0027); the AsyncAPI 3.0 document of the platform's Kafka events and its page,
 * rendered here (Redoc renders OpenAPI only).
 */
@Controller('api/v1')
export class ApiDocsController {
  private readonly document: Record<string, unknown>;
  private readonly site: DocsSite;
  private readonly asyncapiDocument: Record<string, unknown>;
  private readonly eventsPage: string;

  constructor(@Inject(AUTH_CONFIG) config: AuthConfig) {
    // The issuer is the public base URL, in every mode.
    this.document = buildOpenApiDocument({ serverUrl: config.JWT_ISSUER });
    this.site = buildDocsSite({ title: (this.document.info as { title: string }).title, redocBundle: readRedocBundle() });
    // Its servers are the development brokers: production's are not published by the API.
    this.asyncapiDocument = buildAsyncApiDocument();
    this.eventsPage = buildEventsPage(this.asyncapiDocument);
  }

  @Get('openapi.json')
  @Header('Cache-Control', 'public, max-age=300')
  openapi(): Record<string, unknown> {
    return this.document;
  }

  @Get('asyncapi.json')
  @Header('Cache-Control', 'public, max-age=300')
  asyncapi(): Record<string, unknown> {
    return this.asyncapiDocument;
  }

  @Get('docs')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', DOCS_CSP)
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Referrer-Policy', 'no-referrer')
  @Header('Cache-Control', 'public, max-age=300')
  docs(): string {
    return this.site.page;
  }

  /** The events page: the AsyncAPI document as HTML, no script, under the same CSP as the reference. */
  @Get('docs/events')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', DOCS_CSP)
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Referrer-Policy', 'no-referrer')
  @Header('Cache-Control', 'public, max-age=300')
  events(): string {
    return this.eventsPage;
  }

  /** Redoc's bundle and the init script, under names that change with their content. */
  @Get('docs/:asset')
  asset(
    @Param('asset') name: string,
    @Headers('accept-encoding') acceptEncoding: string | undefined,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): void {
    const asset = this.site.assets.get(name);
    if (!asset) throw new ProblemException(404, 'No such file in the API reference.');
    const response = respondWithAsset(asset, { acceptEncoding, ifNoneMatch });
    void reply.code(response.status).headers(response.headers).send(response.body);
  }
}
