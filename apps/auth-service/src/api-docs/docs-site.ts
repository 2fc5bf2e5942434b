import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createStaticAsset, StaticAsset } from './static-asset';

/**
 * The API reference at /api/v1/docs (ADR 0027): a page that loads Redoc 2.5 from this origin and
 * renders /api/v1/openapi.json. Three files, all same-origin: the page, Redoc's standalone bundle
 * (from the installed package, read once at start) and a small init script. No inline script, no
 * font, logo or anything else from elsewhere; the CSP below makes the browser hold the page to it.
 */

export const DOCS_PATH = '/api/v1/docs';
export const SPEC_PATH = '/api/v1/openapi.json';
/** The AsyncAPI 3.0 document of the platform's Kafka events, rendered at /api/v1/docs/events (events-page.ts). */
export const ASYNCAPI_PATH = '/api/v1/asyncapi.json';
/** The events page: the AsyncAPI document as server-rendered HTML (Redoc renders OpenAPI only). */
export const EVENTS_PATH = `${DOCS_PATH}/events`;

/**
 * - script-src 'self': the two script files; no inline script, no eval.
 * - style-src 'unsafe-inline': Redoc styles itself with styled-components, which writes <style>
 *   elements at run time (and React sets style attributes).
 * - worker-src blob:: Redoc's search index runs in a Web Worker made from a Blob URL.
 * - img-src data:: the icons Redoc inlines as data: URLs (and the page's empty icon).
 * - font-src: no font is loaded (system fonts, below); this origin and data: at most.
 * - connect-src 'self': the document, fetched by Redoc.
 * - frame-ancestors 'none', base-uri 'none', form-action 'none': no framing, no <base>, no form posts.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The fonts the reader's system has: Redoc's defaults (Roboto, Montserrat) are web fonts it would have to fetch. */
const SYSTEM_SANS = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';
const SYSTEM_MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';

/** Redoc's options (https://redocly.com/docs/redoc/config). Read-only: Redoc 2 has no console that sends requests. */
export const REDOC_OPTIONS = {
  theme: {
    typography: {
      fontFamily: SYSTEM_SANS,
      headings: { fontFamily: SYSTEM_SANS },
      code: { fontFamily: SYSTEM_MONO },
    },
  },
  // The download button links the served document, never a blob: URL.
  downloadDefinitionUrl: SPEC_PATH,
  downloadFileName: 'openapi.json',
  // Markdown of the document through DOMPurify: the document is ours, but HTML in it would run here.
  sanitize: true,
  requiredPropsFirst: true,
  // curl and the SDK first, then the generated JSON payload.
  payloadSampleIdx: 2,
  expandResponses: '200,201',
};

/** Runs after Redoc's bundle: renders the document named by the container. */
export function redocInitScript(options: Record<string, unknown> = REDOC_OPTIONS): string {
  return `/* The API reference: Redoc (loaded just before this file) renders the document named by #redoc (ADR 0027). */
(function () {
  'use strict';
  var container = document.getElementById('redoc');
  if (typeof Redoc === 'undefined') {
    container.textContent = 'The reference could not be loaded. The OpenAPI document is at ' + container.getAttribute('data-spec-url') + '.';
    return;
  }
  Redoc.init(container.getAttribute('data-spec-url'), ${JSON.stringify(options)}, container);
})();
`;
}

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** Between the reference, the events page and the two documents, atop both pages. */
export const NAV_CSS =
  `.docs-nav{display:flex;flex-wrap:wrap;gap:1.5em;padding:.6em 2em;border-bottom:1px solid #dde1e6;font:14px/1.5 ${SYSTEM_SANS}}` +
  '.docs-nav a{color:#2f5fa8;text-decoration:none}.docs-nav a:hover{text-decoration:underline}.docs-nav [aria-current]{font-weight:600}';

export function siteNav(current: 'reference' | 'events'): string {
  const link = (page: 'reference' | 'events', href: string, label: string) =>
    page === current ? `<span aria-current="page">${label}</span>` : `<a href="${href}">${label}</a>`;
  return `<nav class="docs-nav" aria-label="API documentation">${link('reference', DOCS_PATH, 'HTTP API reference')}${link('events', EVENTS_PATH, 'Events (Kafka)')}<a href="${SPEC_PATH}">openapi.json</a><a href="${ASYNCAPI_PATH}">asyncapi.json</a></nav>`;
}

export interface DocsSite {
  page: string;
  /** By file name under /api/v1/docs/. */
  assets: ReadonlyMap<string, StaticAsset>;
}

/** The start of a docs page up to `</head>`: the same head for the reference and the events page. `title` is escaped HTML. */
export function pageHead(title: string, css: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${title}</title>
<style>${css}</style>
</head>`;
}

/** The page and its two scripts, for the document titled `title`. */
export function buildDocsSite(options: { title: string; redocBundle: Buffer }): DocsSite {
  const redoc = createStaticAsset('redoc.standalone.js', options.redocBundle, 'text/javascript; charset=utf-8');
  const init = createStaticAsset('redoc-init.js', redocInitScript(), 'text/javascript; charset=utf-8');
  const script = (asset: StaticAsset) => `<script src="${DOCS_PATH}/${asset.name}" integrity="${asset.integrity}"></script>`;
  const title = escapeHtml(`${options.title}: reference`);
  const page = `${pageHead(title, `body{margin:0}${NAV_CSS}`)}
<body>
${siteNav('reference')}
<noscript><p>This reference needs JavaScript. The OpenAPI 3.1 document is at <a href="${SPEC_PATH}">${SPEC_PATH}</a>; the events (AsyncAPI 3.0) are at <a href="${EVENTS_PATH}">${EVENTS_PATH}</a>, no script needed.</p></noscript>
<div id="redoc" data-spec-url="${SPEC_PATH}"></div>
${script(redoc)}
${script(init)}
</body>
</html>
`;
  return { page, assets: new Map([redoc, init].map((asset) => [asset.name, asset])) };
}

/**
 * The one remote resource Redoc 2.5 loads by itself: the Redocly logo of the "API docs by Redocly"
 * link at the foot of the menu, an <img> it renders unconditionally. The CSP would block it, but the
 * browser would still log the attempt: the image's source is emptied, on which Redoc drops the image
 * (its onError) and keeps the link's text.
 */
export const REDOCLY_LOGO_SOURCE = 'src:"https://cdn.redoc.ly/redoc/logo-mini.svg"';

/** Redoc's standalone bundle as the page serves it: the installed file, without the remote logo. */
export function localRedocBundle(bundle: Buffer): Buffer {
  const text = bundle.toString('utf8');
  // Once in 2.5.4; a Redoc that moved it is caught by docs-site.spec.ts (no https image left).
  return text.includes(REDOCLY_LOGO_SOURCE) ? Buffer.from(text.split(REDOCLY_LOGO_SOURCE).join('src:""'), 'utf8') : bundle;
}

/**
 * Redoc's standalone bundle (redoc 2.5.4, package.json), read once at start. The auth service's
 * build copies it from the installed package into dist/apps/auth-service/assets (with its licence):
 * redoc is a development dependency, so the images' production install does not pull in the React,
 * MobX and styled-components it declares as peers for one 1.1 MB file. Run from sources (the unit
 * specs), the installed package itself.
 */
export function readRedocBundle(): Buffer {
  // From dist/apps/auth-service/apps/auth-service/src/api-docs to dist/apps/auth-service/assets.
  const built = join(__dirname, '..', '..', '..', '..', 'assets', 'redoc.standalone.js');
  return localRedocBundle(readFileSync(existsSync(built) ? built : require.resolve('redoc/bundles/redoc.standalone.js')));
}
