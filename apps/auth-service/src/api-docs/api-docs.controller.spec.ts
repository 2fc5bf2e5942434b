import { Module } from '@nestjs/common';
import { buildAsyncApiDocument } from '@invoicing/contracts';
import { createServiceApp, ServiceApp } from '@invoicing/service-kit';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { ApiDocsController } from './api-docs.controller';
import { DOCS_CSP, readRedocBundle } from './docs-site';

const ISSUER = 'https://api.invoicing.test';

@Module({
  controllers: [ApiDocsController],
  providers: [{ provide: AUTH_CONFIG, useValue: { JWT_ISSUER: ISSUER } as AuthConfig }],
})
class ApiDocsOnlyModule {}

/** The controller in the service skeleton (headers, errors), answering fastify.inject: no port, no database. */
describe(ApiDocsController.name, () => {
  let service: ServiceApp;
  const installed = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'));
  const redocBundle = readRedocBundle();

  beforeAll(async () => {
    service = await createServiceApp(ApiDocsOnlyModule, { service: 'auth-service', logLevel: 'silent' });
    await service.app.init();
    await service.fastify.ready();
  });
  afterAll(() => service?.app.close());

  const get = (url: string, headers: Record<string, string> = {}) => service.fastify.inject({ method: 'GET', url, headers });
  const scriptPaths = (html: string) => [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);

  it('serves the page with its CSP, referencing only scripts of /api/v1/docs', async () => {
    const page = await get('/api/v1/docs');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(DOCS_CSP);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const scripts = scriptPaths(page.body);
    expect(scripts).toHaveLength(2);
    for (const src of scripts) expect(src).toMatch(/^\/api\/v1\/docs\/[\w.-]+\.js$/);
  });

  it("serves Redoc's bundle from the installed package, gzipped when accepted, cached for a year, 304 on its ETag", async () => {
    // The installed file, but for the remote logo's source (docs-site.spec.ts).
    expect(redocBundle.length).toBe(installed.length - 'https://cdn.redoc.ly/redoc/logo-mini.svg'.length);
    const [redocPath] = scriptPaths((await get('/api/v1/docs')).body);
    expect(redocPath).toMatch(/^\/api\/v1\/docs\/redoc\.standalone\.[0-9a-f]{16}\.js$/);

    const plain = await get(redocPath);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.rawPayload.equals(redocBundle)).toBe(true);

    const gzipped = await get(redocPath, { 'accept-encoding': 'gzip, deflate, br' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.rawPayload.length).toBeLessThan(redocBundle.length / 2);
    expect(gunzipSync(gzipped.rawPayload).equals(redocBundle)).toBe(true);

    const again = await get(redocPath, { 'accept-encoding': 'gzip', 'if-none-match': String(gzipped.headers.etag) });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
  });

  it('serves the init script, which starts Redoc on the served document', async () => {
    const [, initPath] = scriptPaths((await get('/api/v1/docs')).body);
    const init = await get(initPath);
    expect(init.statusCode).toBe(200);
    expect(init.body).toContain('Redoc.init(');
    expect(init.headers['content-type']).toBe('text/javascript; charset=utf-8');
  });

  it('answers 404 in problem+json for any other file, a stale hash included', async () => {
    // (`/api/v1/docs/..%2Fopenapi.json` is refused before routing, 400: service-kit's ambiguous-path.)
    for (const url of ['/api/v1/docs/redoc.standalone.js', '/api/v1/docs/redoc.standalone.0000000000000000.js']) {
      const missing = await get(url);
      expect({ url, status: missing.statusCode }).toEqual({ url, status: 404 });
      expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(String(missing.headers['cache-control'] ?? '')).not.toMatch(/max-age=31536000/);
    }
  });

  it('serves the AsyncAPI 3.0 document beside the OpenAPI document, as JSON, cached as it is', async () => {
    const [asyncapi, openapi] = [await get('/api/v1/asyncapi.json'), await get('/api/v1/openapi.json')];
    expect(asyncapi.statusCode).toBe(200);
    expect(asyncapi.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(asyncapi.headers['content-type']).toBe(openapi.headers['content-type']);
    expect(asyncapi.headers['cache-control']).toBe('public, max-age=300');
    expect(asyncapi.headers['cache-control']).toBe(openapi.headers['cache-control']);
    const doc = asyncapi.json() as { asyncapi: string; channels: Record<string, { address: string }> };
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc).toEqual(buildAsyncApiDocument());
    expect(Object.values(doc.channels).map((c) => c.address)).toEqual(expect.arrayContaining(['auth.revocations.v1', 'invoicing.domain.v1', 'auth.audit.v1']));
  });

  it('serves the events page under the docs CSP, with no script, listing every topic and message (not taken for a script file)', async () => {
    const page = await get('/api/v1/docs/events');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(DOCS_CSP);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['cache-control']).toBe('public, max-age=300');
    expect(page.body).not.toMatch(/<script\b/);
    const doc = buildAsyncApiDocument() as { channels: Record<string, { address: string }>; components: { messages: Record<string, unknown> } };
    for (const channel of Object.values(doc.channels)) expect(page.body).toContain(`<code>${channel.address}</code>`);
    for (const type of Object.keys(doc.components.messages)) expect(page.body).toContain(`id="message-${type}"`);
  });

  it('links the events page and both documents from the reference page', async () => {
    const page = (await get('/api/v1/docs')).body;
    expect(page).toContain('<a href="/api/v1/docs/events">Events (Kafka)</a>');
    expect(page).toContain('<a href="/api/v1/asyncapi.json">asyncapi.json</a>');
  });

  it('serves the OpenAPI document with the issuer as its server and the code samples', async () => {
    const doc = (await get('/api/v1/openapi.json')).json() as {
      servers: Array<{ url: string }>;
      paths: Record<string, Record<string, { 'x-codeSamples'?: Array<{ source: string }> }>>;
    };
    expect(doc.servers).toEqual([{ url: ISSUER }]);
    expect(doc.paths['/api/v1/auth/token'].post['x-codeSamples']?.[0].source).toContain(`curl -X POST ${ISSUER}/api/v1/auth/token`);
  });
});
