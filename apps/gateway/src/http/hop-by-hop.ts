/**
 * Fields that describe one connection and end with it (RFC 9110 section 7.6.1). A proxy forwards
 * none of them, nor any field its `Connection` names: relayed from an upstream, `Connection:
 * keep-alive` made Node keep the caller's connection open against the caller's own `Connection:
 * close` (or HTTP/1.0), for the 72 s of the upstream's `Keep-Alive`; sent by a caller, `Keep-Alive`
 * made undici refuse the upstream request (a 502).
 */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'transfer-encoding', 'upgrade'];

/** A copy of `headers` (names in lower case, as Node and undici give them) without the hop-by-hop fields. */
export function withoutHopByHop<T extends Record<string, unknown>>(headers: T): T {
  const dropped = new Set([...HOP_BY_HOP, ...connectionOptions(headers.connection)]);
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !dropped.has(name))) as T;
}

/** The field names a `Connection` header lists (`close, X-Foo` → close, x-foo). */
function connectionOptions(value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value];
  return values
    .filter((v): v is string => typeof v === 'string')
    .flatMap((v) => v.toLowerCase().split(','))
    .map((token) => token.trim())
    .filter(Boolean);
}
