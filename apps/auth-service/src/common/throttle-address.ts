import { isIPv6 } from 'node:net';

/**
 * The part of a client address that throttles count against. An IPv4 address as it is; an IPv6
 * address by its /64, the block one subscriber is routinely given, so that walking the addresses of
 * one's own block does not buy a fresh budget each time. An IPv4-mapped IPv6 address is its IPv4.
 */
export function throttleAddress(ip: string): string {
  if (!isIPv6(ip)) return ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  const [head, tail = ''] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (::1.2.3.4) is two groups; only the first four groups matter here.
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
