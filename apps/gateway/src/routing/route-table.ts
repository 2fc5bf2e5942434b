import type { GatewayRoute, ServiceName } from '@invoicing/contracts';

/** A route with the upstream it forwards to. */
export interface ResolvedRoute extends GatewayRoute {
  upstream: string;
}

/**
 * Joins the platform's route table with the configured upstream URLs, longest prefix first (the
 * order in which they must be tried). Refuses a malformed table at start rather than mis-routing.
 */
export function resolveRoutes(routes: readonly GatewayRoute[], upstreams: Record<ServiceName, string>): ResolvedRoute[] {
  const seen = new Set<string>();
  for (const { prefix } of routes) {
    if (!/^\/[^?#\s]*[^/?#\s]$/.test(prefix)) {
      throw new Error(`route prefix "${prefix}" must start with "/" and must not end with "/"`);
    }
    if (seen.has(prefix)) throw new Error(`route prefix "${prefix}" is listed twice`);
    seen.add(prefix);
  }
  return routes
    .map((route) => {
      const upstream = upstreams[route.service];
      if (!upstream) throw new Error(`no upstream URL for ${route.service} (route ${route.prefix})`);
      return { ...route, upstream };
    })
    .sort((a, b) => b.prefix.length - a.prefix.length);
}

/**
 * The route a path belongs to: the longest prefix that matches on a segment boundary, so
 * `/api/v1/invoices/inv_1` matches `/api/v1/invoices` and `/api/v1/invoicesX` matches nothing. The
 * proxy's router applies the same rule; this function states it where it can be tested and printed.
 */
export function matchRoute<R extends GatewayRoute>(sortedRoutes: readonly R[], path: string): R | undefined {
  const pathname = path.split('?', 1)[0];
  return sortedRoutes.find(({ prefix }) => pathname === prefix || pathname.startsWith(`${prefix}/`));
}
