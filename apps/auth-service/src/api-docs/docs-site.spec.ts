import { readFileSync } from 'node:fs';
import {
  ASYNCAPI_PATH,
  buildDocsSite,
  DOCS_CSP,
  DOCS_PATH,
  EVENTS_PATH,
  localRedocBundle,
  readRedocBundle,
  REDOCLY_LOGO_SOURCE,
  redocInitScript,
  REDOC_OPTIONS,
  siteNav,
  SPEC_PATH,
} from './docs-site';

describe(buildDocsSite.name, () => {
  const site = buildDocsSite({ title: 'Invoicing <public> API', redocBundle: Buffer.from('/* redoc */') });
  const [redoc, init] = [...site.assets.values()];

  it('loads Redoc and then the init script, both from /api/v1/docs on this origin, with their integrity', () => {
    const scripts = [...site.page.matchAll(/<script\b([^>]*)>([^<]*)<\/script>/g)];
    expect(scripts.map((s) => s[1].trim())).toEqual([
      `src="/api/v1/docs/${redoc.name}" integrity="${redoc.integrity}"`,
      `src="/api/v1/docs/${init.name}" integrity="${init.integrity}"`,
    ]);
    // No inline script: every script element is empty and loads a file.
    expect(scripts.every((s) => s[2] === '')).toBe(true);
    expect(redoc.name).toMatch(/^redoc\.standalone\.[0-9a-f]{16}\.js$/);
    expect(init.name).toMatch(/^redoc-init\.[0-9a-f]{16}\.js$/);
  });

  it('references nothing outside this origin: every src and href is a path, the icon an empty data: URL', () => {
    const urls = [...site.page.matchAll(/\b(?:src|href|data-spec-url)="([^"]*)"/g)].map((m) => m[1]);
    expect(urls.length).toBeGreaterThanOrEqual(4);
    for (const url of urls) expect(url).toMatch(/^(?:\/api\/v1\/(?:docs$|docs\/|openapi\.json$|asyncapi\.json$)|data:,$)/);
    // Without an icon of its own the browser would ask for /favicon.ico, which nothing serves.
    expect(site.page).toContain('<link rel="icon" href="data:,">');
    expect(site.page).not.toMatch(/https?:\/\//);
    expect(site.page).toContain('<div id="redoc" data-spec-url="/api/v1/openapi.json"></div>');
  });

  it('links the events page (the AsyncAPI document rendered) and both documents above the reference', () => {
    const nav = /<nav class="docs-nav"[^>]*>.*?<\/nav>/.exec(site.page)?.[0] ?? '';
    expect(nav).toBe(siteNav('reference'));
    expect([...nav.matchAll(/href="([^"]+)"/g)].map((m) => m[1])).toEqual([EVENTS_PATH, SPEC_PATH, ASYNCAPI_PATH].map(String));
    expect(nav).toContain('<span aria-current="page">HTTP API reference</span>');
    expect(siteNav('events')).toContain(`<a href="${DOCS_PATH}">HTTP API reference</a>`);
    // Before Redoc's container, so the reader sees it first; no script of its own.
    expect(site.page.indexOf('class="docs-nav"')).toBeLessThan(site.page.indexOf('id="redoc"'));
  });

  it('escapes the title', () => {
    expect(site.page).toContain('<title>Invoicing &lt;public&gt; API: reference</title>');
  });

  it('starts Redoc on the container with system fonts, a download link to the served document and sanitized markdown', () => {
    const script = init.body.toString();
    expect(script).toBe(redocInitScript());
    expect(script).toContain(`Redoc.init(container.getAttribute('data-spec-url'), ${JSON.stringify(REDOC_OPTIONS)}, container);`);
    expect(script).not.toMatch(/https?:\/\//);
    expect(REDOC_OPTIONS).toMatchObject({ downloadDefinitionUrl: '/api/v1/openapi.json', sanitize: true });
    const fonts = Object.values({
      body: REDOC_OPTIONS.theme.typography.fontFamily,
      headings: REDOC_OPTIONS.theme.typography.headings.fontFamily,
      code: REDOC_OPTIONS.theme.typography.code.fontFamily,
    });
    for (const font of fonts) {
      expect(font).toMatch(/^(?:system-ui|ui-monospace),/);
      expect(font).not.toMatch(/Montserrat|Google/);
    }
  });
});

describe('DOCS_CSP', () => {
  const directives = Object.fromEntries(DOCS_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));

  it('allows scripts from this origin only, no inline script and no eval; blob: workers for the search index', () => {
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['worker-src']).toEqual(['blob:']);
    expect(directives['connect-src']).toEqual(["'self'"]);
    expect(directives['style-src']).toEqual(["'self'", "'unsafe-inline'"]);
    expect(directives['img-src']).toEqual(["'self'", 'data:']);
    expect(directives['font-src']).toEqual(["'self'", 'data:']);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(directives['base-uri']).toEqual(["'none'"]);
    expect(DOCS_CSP).not.toMatch(/unsafe-eval|https?:/);
  });
});

describe(readRedocBundle.name, () => {
  const installed = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'));

  it("is the installed Redoc 2.5 standalone bundle, with the Redocly logo's remote source emptied", () => {
    expect((require('redoc/package.json') as { version: string }).version).toMatch(/^2\.5\./);
    // The logo is Redoc's one remote resource, in its bundle exactly once.
    expect(installed.toString('utf8').split(REDOCLY_LOGO_SOURCE)).toHaveLength(2);
    expect(readRedocBundle().toString('utf8')).toBe(installed.toString('utf8').replace(REDOCLY_LOGO_SOURCE, 'src:""'));
  });

  it('leaves no image, script or stylesheet source on another origin in the bundle', () => {
    const served = readRedocBundle().toString('utf8');
    expect(served).not.toContain('cdn.redoc.ly');
    expect(served).not.toMatch(/\bsrc:\s*"https?:/);
    expect(served).not.toMatch(/fonts\.(?:googleapis|gstatic)\.com/);
  });

  it('serves any other bundle unchanged', () => {
    expect(localRedocBundle(Buffer.from('/* not redoc */')).toString()).toBe('/* not redoc */');
  });
});
