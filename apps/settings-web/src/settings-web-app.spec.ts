import { createLogger } from '@invoicing/service-kit';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSettingsWebApp, DEFAULT_ASSETS_ROOT, REQUIRED_ASSETS, SettingsWebApp } from './settings-web-app';
import { CONTENT_SECURITY_POLICY } from './security-headers';

const silent = createLogger('settings-web', 'silent');

/** A complete assets folder, as the build produces it (the source tree has no compiled scripts). */
function builtAssets(): string {
  const dir = mkdtempSync(join(tmpdir(), 'settings-web-assets-'));
  mkdirSync(join(dir, 'js'));
  writeFileSync(join(dir, 'index.html'), readFileSync(join(DEFAULT_ASSETS_ROOT, 'index.html')));
  writeFileSync(join(dir, 'styles.css'), readFileSync(join(DEFAULT_ASSETS_ROOT, 'styles.css')));
  writeFileSync(join(dir, 'js', 'main.js'), 'export {};\n');
  writeFileSync(join(dir, '.env'), 'SECRET=1\n');
  return dir;
}

describe('settings-web server', () => {
  let app: SettingsWebApp;
  let assets: string;

  beforeAll(async () => {
    assets = builtAssets();
    app = await createSettingsWebApp({ config: { LOG_LEVEL: 'silent' }, assetsRoot: assets, logger: silent });
    await app.fastify.ready();
  });
  afterAll(async () => {
    await app.fastify.close();
    rmSync(assets, { recursive: true, force: true });
  });

  it.each(['/settings', '/settings/', '/settings/api', '/settings/api/keys/new', '/settings/login'])(
    'answers %s with the page and strict security headers',
    async (url) => {
      const res = await app.fastify.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('<script type="module" src="/settings/assets/js/main.js"></script>');
      expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cache-control']).toBe('no-cache');
    },
  );

  it('allows only its own scripts and styles and refuses to be framed', () => {
    const directives = new Map(CONTENT_SECURITY_POLICY.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('style-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
  });

  it('ships a page with no inline script, style or event handler (the CSP would block them)', () => {
    const html = readFileSync(join(DEFAULT_ASSETS_ROOT, 'index.html'), 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
    expect(html).not.toMatch(/<style\b/i);
    expect(html).not.toMatch(/\sstyle=/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/javascript:/i);
  });

  it('serves stylesheet and scripts with their types, revalidated on every load', async () => {
    const css = await app.fastify.inject({ method: 'GET', url: '/settings/assets/styles.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    expect(css.headers['cache-control']).toBe('no-cache');
    expect(css.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    const js = await app.fastify.inject({ method: 'GET', url: '/settings/assets/js/main.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toMatch(/^(text|application)\/javascript/);
  });

  it.each(['/settings/assets/missing.js', '/settings/assets/.env', '/settings/assets/index.html', '/', '/api/v1/account/me'])(
    'answers %s with a problem+json 404 that carries the headers and a request id',
    async (url) => {
      const res = await app.fastify.inject({ method: 'GET', url, headers: { 'x-request-id': 'req-123' } });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 404, title: 'Not found', request_id: 'req-123' });
      expect(res.headers['x-request-id']).toBe('req-123');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    },
  );

  it('has no state-changing routes', async () => {
    const res = await app.fastify.inject({ method: 'POST', url: '/settings', payload: {} });
    expect(res.statusCode).toBe(404);
  });

  it('is live and ready when the built assets are present', async () => {
    expect((await app.fastify.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
    const ready = await app.fastify.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', checks: { assets: 'up' } });
  });

  it('exposes Prometheus metrics', async () => {
    const res = await app.fastify.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('http_request_duration_seconds');
  });
});

describe('settings-web readiness', () => {
  it('is not ready when a required asset is missing (a broken build), and says which check failed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'settings-web-empty-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html>');
    const app = await createSettingsWebApp({ config: { LOG_LEVEL: 'silent' }, assetsRoot: dir, logger: silent });
    try {
      const res = await app.fastify.inject({ method: 'GET', url: '/health/ready' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ status: 'not_ready', checks: { assets: 'down' } });
      expect(REQUIRED_ASSETS).toContain('js/main.js');
    } finally {
      await app.fastify.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
