import { GATEWAY_PORT, GATEWAY_ROUTES, SERVICES, ServiceName } from '@invoicing/contracts';
import { environmentOf, loadCompose } from './support/compose';
import { K8sObject, named, OVERLAYS, render, renderOverlay } from './support/manifests';
import { landedServices, runJsonCommand } from './support/platform';

interface GatewayRouteLine {
  prefix: string;
  service: ServiceName;
  upstream: string;
}

interface IngressPath {
  path: string;
  pathType: string;
  backend: { service: { name: string; port: { number?: number; name?: string } } };
}

/** The platform table as the three modes must all express it: prefix → service:port. */
const expected = GATEWAY_ROUTES.map((r) => ({ prefix: r.prefix, service: r.service, port: SERVICES[r.service].port })).sort((a, b) =>
  a.prefix.localeCompare(b.prefix),
);

function ingressRoutes(ingress: K8sObject) {
  const rules = (ingress.spec as { rules: { host?: string; http: { paths: IngressPath[] } }[] }).rules;
  // One rule: every path on one base URL, as with the gateway.
  expect(rules).toHaveLength(1);
  const paths = rules[0].http.paths;
  for (const p of paths) expect({ path: p.path, pathType: p.pathType }).toEqual({ path: p.path, pathType: 'Prefix' });
  return paths
    .map((p) => ({ prefix: p.path, service: p.backend.service.name, port: p.backend.service.port.number }))
    .sort((a, b) => a.prefix.localeCompare(b.prefix));
}

describe('route tables: gateway, docker-compose and Ingress agree with GATEWAY_ROUTES', () => {
  const compose = loadCompose();

  it('the built gateway routes every prefix to its service (local defaults: loopback ports of SERVICES)', () => {
    const routes = runJsonCommand<GatewayRouteLine[]>('gateway', 'routes', {});
    expect(routes.map((r) => ({ prefix: r.prefix, service: r.service, port: Number(new URL(r.upstream).port) })).sort((a, b) => a.prefix.localeCompare(b.prefix))).toEqual(expected);
    for (const r of routes) expect(new URL(r.upstream).hostname).toBe('127.0.0.1');
  });

  it("compose's gateway environment sends every prefix to the compose service of that name and port", () => {
    const env = environmentOf(compose.services.gateway);
    const routes = runJsonCommand<GatewayRouteLine[]>('gateway', 'routes', env);
    const actual = routes
      .map((r) => {
        const url = new URL(r.upstream);
        return { prefix: r.prefix, service: r.service, port: Number(url.port), host: url.hostname };
      })
      .sort((a, b) => a.prefix.localeCompare(b.prefix));
    expect(actual).toEqual(expected.map((e) => ({ ...e, host: e.service })));
    // No upstream left at its loopback default: every variable is set in compose.
    const spec = runJsonCommand<{ name: string }[]>('gateway', 'env-spec', {}).map((v) => v.name).filter((n) => n.endsWith('_URL'));
    expect(Object.keys(env).filter((k) => k.endsWith('_URL')).sort()).toEqual(spec.sort());
    // ... and the compose services behind those names listen on those ports.
    for (const name of landedServices()) expect(compose.services[name].build?.args?.PORT).toBe(String(SERVICES[name].port));
  });

  it('the Ingress of the base has exactly the paths of GATEWAY_ROUTES, as Prefix, to the right Service port', () => {
    const ingress = named(render('base'), 'Ingress', 'invoicing');
    expect(ingress).toBeDefined();
    expect(ingressRoutes(ingress as K8sObject)).toEqual(expected);
  });

  it.each(OVERLAYS)('the %s overlay keeps every path (a patch must not replace the rules)', (overlay) => {
    const ingress = named(renderOverlay(overlay), 'Ingress', 'invoicing');
    expect(ingressRoutes(ingress as K8sObject)).toEqual(expected);
  });

  it('each routed service that exists has a Kubernetes Service on the port the Ingress uses', () => {
    const objects = render('base');
    for (const name of landedServices()) {
      const service = named(objects, 'Service', name);
      expect({ name, exists: !!service }).toEqual({ name, exists: true });
      const ports = (service?.spec as { ports: { port: number }[] }).ports.map((p) => p.port);
      expect(ports).toEqual([SERVICES[name].port]);
    }
  });

  it('the gateway port is the base URL port everywhere', () => {
    expect(compose.services.gateway.ports).toEqual([`${GATEWAY_PORT}:${GATEWAY_PORT}`]);
    expect(runJsonCommand<{ name: string }[]>('gateway', 'env-spec', {}).some((v) => v.name === 'PORT')).toBe(true);
  });
});
