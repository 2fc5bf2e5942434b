import { Module } from '@nestjs/common';
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
    for (const url of ['/api/v1/docs/redoc.standalone.js', '/api/v1/docs/redoc.standalone.0000000000000000.js', '/api/v1/docs/..%2Fopenapi.json']) {
      const missing = await get(url);
      expect({ url, status: missing.statusCode }).toEqual({ url, status: 404 });
      expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(String(missing.headers['cache-control'] ?? '')).not.toMatch(/max-age=31536000/);
    }
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
