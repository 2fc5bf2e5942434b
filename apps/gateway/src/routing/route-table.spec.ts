import { GATEWAY_ROUTES, GatewayRoute, SERVICES, ServiceName } from '@invoicing/contracts';
import { matchRoute, resolveRoutes } from './route-table';

const upstreams = Object.fromEntries(
  (Object.keys(SERVICES) as ServiceName[]).map((name) => [name, `http://${name}:${SERVICES[name].port}`]),
) as Record<ServiceName, string>;

describe(resolveRoutes.name, () => {
  it('attaches the upstream of each route and orders the longest prefix first', () => {
    const routes = resolveRoutes(GATEWAY_ROUTES, upstreams);
    expect(routes).toHaveLength(GATEWAY_ROUTES.length);
    for (let i = 1; i < routes.length; i++) expect(routes[i - 1].prefix.length).toBeGreaterThanOrEqual(routes[i].prefix.length);
    for (const route of routes) expect(route.upstream).toBe(upstreams[route.service]);
  });

  it('refuses a prefix with a trailing slash, without a leading slash, or listed twice', () => {
    const one = (prefix: string): GatewayRoute[] => [{ prefix, service: 'auth-service' }];
    expect(() => resolveRoutes(one('/api/v1/auth/'), upstreams)).toThrow(/must not end/);
    expect(() => resolveRoutes(one('api/v1/auth'), upstreams)).toThrow(/must start/);
    expect(() => resolveRoutes([...one('/a'), ...one('/a')], upstreams)).toThrow(/twice/);
  });
});

describe(matchRoute.name, () => {
  it('sends RFC 8414 discovery at the base URL to the auth service', () => {
    const platform = resolveRoutes(GATEWAY_ROUTES, upstreams);
    expect(matchRoute(platform, '/.well-known/oauth-authorization-server')?.service).toBe('auth-service');
    expect(matchRoute(platform, '/.well-known/openid-configuration')).toBeUndefined();
  });

  it('sends the API reference, its scripts and the OpenAPI document to the auth service (ADR 0027)', () => {
    const platform = resolveRoutes(GATEWAY_ROUTES, upstreams);
    for (const path of ['/api/v1/docs', '/api/v1/docs/redoc.standalone.0123456789abcdef.js', '/api/v1/docs/redoc-init.0123456789abcdef.js', '/api/v1/openapi.json']) {
      expect({ path, service: matchRoute(platform, path)?.service }).toEqual({ path, service: 'auth-service' });
    }
    expect(matchRoute(platform, '/api/v1/docsX')).toBeUndefined();
  });

  const routes = resolveRoutes(
    [
      { prefix: '/api/v1/invoices', service: 'invoice-service' },
      { prefix: '/api/v1/invoices/exports', service: 'auth-service' },
      { prefix: '/settings', service: 'settings-web' },
    ],
    upstreams,
  );

  it('matches a prefix exactly and below it', () => {
    expect(matchRoute(routes, '/api/v1/invoices')?.service).toBe('invoice-service');
    expect(matchRoute(routes, '/api/v1/invoices/inv_1?expand=lines')?.service).toBe('invoice-service');
    expect(matchRoute(routes, '/settings/')?.service).toBe('settings-web');
  });

  it('lets the longest prefix win', () => {
    expect(matchRoute(routes, '/api/v1/invoices/exports/1')?.service).toBe('auth-service');
    expect(matchRoute(routes, '/api/v1/invoices/exportsX')?.service).toBe('invoice-service');
  });

  it('matches only on a segment boundary', () => {
    expect(matchRoute(routes, '/api/v1/invoicesX')).toBeUndefined();
    expect(matchRoute(routes, '/settingsfoo')).toBeUndefined();
    expect(matchRoute(routes, '/')).toBeUndefined();
  });
});
