import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, LookupAddress, promises as dnsPromises } from 'node:dns';
import type { LookupFunction } from 'node:net';

/**
 * Server-side request forgery: a tenant chooses the URL this service connects to, so nothing it
 * chooses may reach inside the platform's network. Every address that is not a public unicast one is
 * refused, at registration (the name resolved) and again at every connection (the `lookup` below
 * resolves, checks every address, and hands the connection the address it checked: a name that
 * resolves to a public address at registration and to 127.0.0.1 later, DNS rebinding, is refused at
 * the connection). WEBHOOK_ALLOW_PRIVATE_URLS lifts this for a receiver on a developer's machine.
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, the cloud metadata address 169.254.169.254 among them
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['::', 96], // IPv4-compatible (deprecated)
  ['64:ff9b::', 96], // NAT64: would reach any IPv4 address, private ones included
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['2001::', 23], // IETF protocol assignments: Teredo (2001::/32, embeds an IPv4 address) among them
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['3fff::', 20], // documentation
  ['fc00::', 7], // unique local (fd00:ec2::254, a metadata address, among them)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

/** Whether a connection to this address is allowed (a literal IPv4 or IPv6 address). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const mapped = /^::ffff:(?:0:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return isPublicAddress(mapped[1]);
    if (/^::ffff:/i.test(address)) return false; // a mapped address in hex form: decode nothing, refuse
    return !BLOCKED.check(address, 'ipv6');
  }
  return !BLOCKED.check(address, 'ipv4');
}

export class UrlRefused extends Error {}

export interface UrlPolicyOptions {
  allowPrivate: boolean;
  /** The resolver; tests pass one that answers what they need. */
  resolve?: (host: string) => Promise<string[]>;
}

/**
 * DNS over c-ares, each query bounded (2 s, 2 tries): `dns.lookup` runs on libuv's four-thread pool
 * and cannot be cancelled, so a tenant's names whose servers never answer would hold every thread
 * and stall every other tenant's lookups (and ours of Postgres). No hosts file: a name must be in
 * the DNS, which is what a public endpoint is.
 */
const resolver = new dnsPromises.Resolver({ timeout: 2000, tries: 2 });

async function publicResolve(host: string): Promise<string[]> {
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  const addresses = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
  if (addresses.length === 0) throw Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' });
  return addresses;
}

/** For local development (private URLs allowed): the system resolver, hosts file and `localhost` included. */
function systemResolve(host: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve((addresses as LookupAddress[]).map((a) => a.address)))),
  );
}

function defaultResolve(options: UrlPolicyOptions): (host: string) => Promise<string[]> {
  return options.resolve ?? (options.allowPrivate ? systemResolve : publicResolve);
}

/** Host of a URL without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Checks what a URL may be, before anything is resolved: https (http only with allowPrivate), a
 * host, no credentials in it, no fragment. Returns the normalised URL, or throws UrlRefused with a
 * message that can be shown to the caller.
 */
export function checkUrlShape(text: string, options: UrlPolicyOptions): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UrlRefused('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && !(options.allowPrivate && url.protocol === 'http:')) throw new UrlRefused('must be an https URL');
  if (url.username || url.password) throw new UrlRefused('must not carry credentials');
  if (url.hash) throw new UrlRefused('must not have a fragment');
  if (!hostOf(url)) throw new UrlRefused('must have a host');
  return url;
}

/**
 * The registration check: the shape, then every address the host resolves to (all of them must be
 * public: a name with one private address among public ones is refused too).
 */
export async function checkUrl(text: string, options: UrlPolicyOptions): Promise<URL> {
  const url = checkUrlShape(text, options);
  if (options.allowPrivate) return url;
  const host = hostOf(url);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await defaultResolve(options)(host);
    } catch {
      throw new UrlRefused('has a host name that does not resolve');
    }
  }
  if (addresses.length === 0 || !addresses.every(isPublicAddress)) throw new UrlRefused('resolves to an address that is not public (loopback, private, link-local or reserved)');
  return url;
}

/**
 * The `lookup` of every delivery's connection: resolves, refuses the connection unless every address
 * is public, and connects to the first. Node calls it for host names only: a literal IP in the URL is
 * checked by {@link connectionTargetAllowed} before the request.
 */
export function guardedLookup(options: UrlPolicyOptions): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    defaultResolve(options)(hostname).then(
      (addresses) => {
        const allowed = options.allowPrivate ? addresses : addresses.every(isPublicAddress) ? addresses : [];
        if (allowed.length === 0) {
          callback(Object.assign(new UrlRefused(`${hostname} resolves to an address that is not public`), { code: 'EADDRNOTPUBLIC' }), '', 4);
          return;
        }
        const chosen = allowed[0];
        if ((lookupOptions as { all?: boolean }).all) {
          (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed.map((address) => ({ address, family: isIP(address) })));
        } else callback(null, chosen, isIP(chosen));
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 4),
    );
  };
}

/** Whether a URL whose host is a literal address may be connected to (Node skips `lookup` for it). */
export function connectionTargetAllowed(url: URL, options: UrlPolicyOptions): boolean {
  const host = hostOf(url);
  return options.allowPrivate || !isIP(host) || isPublicAddress(host);
}
