import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { acceptsGzip, createStaticAsset, respondWithAsset } from './static-asset';

describe(createStaticAsset.name, () => {
  it('names the file after a hash of its content and keeps the bytes, gzipped and the SRI digest', () => {
    const asset = createStaticAsset('redoc-init.js', 'console.log(1);\n', 'text/javascript; charset=utf-8');
    const hash = createHash('sha256').update('console.log(1);\n').digest('hex').slice(0, 16);
    expect(asset.name).toBe(`redoc-init.${hash}.js`);
    expect(asset.body.toString()).toBe('console.log(1);\n');
    expect(gunzipSync(asset.gzipped).toString()).toBe('console.log(1);\n');
    expect(asset.integrity).toBe(`sha384-${createHash('sha384').update('console.log(1);\n').digest('base64')}`);
    expect(createStaticAsset('redoc-init.js', 'console.log(2);\n', 'text/javascript').name).not.toBe(asset.name);
  });
});

describe(acceptsGzip.name, () => {
  it.each([
    ['gzip, deflate, br, zstd', true],
    ['br;q=1.0, gzip;q=0.8', true],
    ['*', true],
    ['x-gzip', true],
    ['gzip;q=0', false],
    ['*;q=0.5, gzip;q=0', false],
    ['identity', false],
    ['br', false],
    ['', false],
    [undefined, false],
  ])('%s → %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});

describe(respondWithAsset.name, () => {
  const asset = createStaticAsset('redoc.standalone.js', 'x'.repeat(10000), 'text/javascript; charset=utf-8');

  it('sends the gzipped bytes to a client that accepts gzip, the plain ones otherwise, each with its own ETag', () => {
    const gzip = respondWithAsset(asset, { acceptEncoding: 'gzip, br' });
    expect(gzip.status).toBe(200);
    expect(gzip.headers).toMatchObject({ 'Content-Encoding': 'gzip', ETag: `"${asset.hash}-gzip"`, Vary: 'Accept-Encoding' });
    expect(gzip.body).toBe(asset.gzipped);
    const plain = respondWithAsset(asset, {});
    expect(plain.headers['Content-Encoding']).toBeUndefined();
    expect(plain.headers.ETag).toBe(`"${asset.hash}"`);
    expect(plain.body).toBe(asset.body);
    for (const r of [gzip, plain]) {
      expect(r.headers['Cache-Control']).toBe('public, max-age=31536000, immutable');
      expect(r.headers['Content-Type']).toBe('text/javascript; charset=utf-8');
      expect(r.headers['X-Content-Type-Options']).toBe('nosniff');
    }
  });

  it('answers 304 without a body to If-None-Match naming the tag of that encoding', () => {
    const notModified = respondWithAsset(asset, { ifNoneMatch: `"${asset.hash}"` });
    expect(notModified.status).toBe(304);
    expect(notModified.body).toBeUndefined();
    expect(notModified.headers.ETag).toBe(`"${asset.hash}"`);
    expect(respondWithAsset(asset, { ifNoneMatch: `W/"other", W/"${asset.hash}-gzip"`, acceptEncoding: 'gzip' }).status).toBe(304);
    expect(respondWithAsset(asset, { ifNoneMatch: `"${asset.hash}-gzip"` }).status).toBe(200);
    expect(respondWithAsset(asset, { ifNoneMatch: '"other"' }).status).toBe(200);
  });
});
