import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

/**
 * A file the reference page loads, held in memory for the life of the process. Its name carries a
 * hash of its content, so a browser may keep it for a year: a changed file is another URL.
 */
export interface StaticAsset {
  /** File name under /api/v1/docs/, e.g. `redoc.standalone.0123456789abcdef.js`. */
  name: string;
  contentType: string;
  body: Buffer;
  /** The same bytes gzipped (about a third of Redoc's bundle), sent to clients that accept gzip. */
  gzipped: Buffer;
  /** `sha384-...` of body, for the script tag's integrity attribute. */
  integrity: string;
  /** The hash in the name. */
  hash: string;
}

export interface AssetResponse {
  status: 200 | 304;
  headers: Record<string, string>;
  body?: Buffer;
}

/** `redoc.standalone.js` + content → `redoc.standalone.<16 hex of SHA-256>.js`. */
export function createStaticAsset(fileName: string, content: Buffer | string, contentType: string): StaticAsset {
  const body = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const dot = fileName.lastIndexOf('.');
  return {
    name: `${fileName.slice(0, dot)}.${hash}${fileName.slice(dot)}`,
    contentType,
    body,
    gzipped: gzipSync(body, { level: 9 }),
    integrity: `sha384-${createHash('sha384').update(body).digest('base64')}`,
    hash,
  };
}

/** Whether an Accept-Encoding header admits gzip (`gzip`, `x-gzip` or `*`, with a q above 0). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  let gzip: number | undefined;
  let any: number | undefined;
  for (const part of acceptEncoding.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (coding === 'gzip' || coding === 'x-gzip') gzip = Number.isNaN(q) ? 0 : q;
    else if (coding === '*') any = Number.isNaN(q) ? 0 : q;
  }
  return (gzip ?? any ?? 0) > 0;
}

/** Whether If-None-Match names this entity tag (weak comparison, RFC 9110 section 13.1.2), or is `*`. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || strip(tag) === strip(etag));
}

/**
 * The answer to a GET of the asset: gzipped when the client accepts it (each encoding its own
 * ETag), 304 for a copy the client already holds, immutable for a year either way.
 */
export function respondWithAsset(asset: StaticAsset, request: { acceptEncoding?: string; ifNoneMatch?: string }): AssetResponse {
  const gzip = acceptsGzip(request.acceptEncoding);
  const etag = `"${asset.hash}${gzip ? '-gzip' : ''}"`;
  const headers: Record<string, string> = {
    'Cache-Control': 'public, max-age=31536000, immutable',
    ETag: etag,
    Vary: 'Accept-Encoding',
    'X-Content-Type-Options': 'nosniff',
  };
  if (matches(request.ifNoneMatch, etag)) return { status: 304, headers };
  headers['Content-Type'] = asset.contentType;
  if (gzip) headers['Content-Encoding'] = 'gzip';
  return { status: 200, headers, body: gzip ? asset.gzipped : asset.body };
}
