import { GATEWAY_PORT, GATEWAY_ROUTES, SERVICES } from '@invoicing/contracts';
import { DEFAULT_HSTS, GATEWAY_LIMITS, hstsHeaderValue, namedUpstreams } from '@invoicing/gateway';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCompose } from './support/compose';
import { COMPOSE_GATEWAY_CONF, committedComposeConfig, freshComposeConfig, parseNginxRouting, routedPrefixes } from './support/gateway';
import { K8sObject, named, OVERLAYS, render, renderOverlay } from './support/manifests';
import { landedServices, ROOT } from './support/platform';

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

describe('route tables: the nginx gateway of docker-compose and the Ingress agree with GATEWAY_ROUTES', () => {
  const compose = loadCompose();
  const gateway = compose.services.gateway;
  const conf = committedComposeConfig();

  it(`${COMPOSE_GATEWAY_CONF} is exactly libs/gateway's compose render (generated, never edited by hand)`, () => {
    // On a difference: npx tsx --tsconfig libs/gateway/tsconfig.spec.json libs/gateway/src/cli.ts compose > deploy/compose/gateway.nginx.conf
    expect(conf).toBe(freshComposeConfig());
  });

  it('that configuration routes every prefix to the compose service of that name, at its port', () => {
    const routes = routedPrefixes(parseNginxRouting(conf))
      .map(({ prefix, server }) => {
        const [host, port] = server.split(':');
        return { prefix, service: host, port: Number(port) };
      })
      .sort((a, b) => a.prefix.localeCompare(b.prefix));
    expect(routes).toEqual(expected);
  });

  it('its upstream blocks name every compose service at its port, and those services listen there', () => {
    const servers = Object.values(parseNginxRouting(conf).upstreams).sort();
    expect(servers).toEqual(Object.values(namedUpstreams()).sort());
    for (const server of servers) {
      const [host, port] = server.split(':');
      expect({ server, composeService: !!compose.services[host] }).toEqual({ server, composeService: true });
      expect(Number(port)).toBe(SERVICES[host as keyof typeof SERVICES].port);
    }
    for (const name of landedServices()) expect(compose.services[name].build?.args?.PORT).toBe(String(SERVICES[name].port));
  });

  it("compose's gateway runs nginx with exactly that file, mounted read-only", () => {
    const mount = (gateway.volumes ?? []).find((v) => v.startsWith(`./${COMPOSE_GATEWAY_CONF}:`));
    expect(mount).toBeDefined();
    const [, target, mode] = (mount as string).split(':');
    expect(mode).toBe('ro');
    const entrypoint = [gateway.entrypoint ?? []].flat();
    expect(entrypoint[0]).toBe('nginx');
    expect(entrypoint[entrypoint.indexOf('-c') + 1]).toBe(target);
    expect(entrypoint.slice(entrypoint.indexOf('-g'))).toEqual(['-g', 'daemon off;']);
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
    expect(gateway.ports).toEqual([`${GATEWAY_PORT}:${GATEWAY_PORT}`]);
    // The public listener (first server block) on every address of the container; stub_status on loopback only.
    expect(parseNginxRouting(conf).listens).toEqual([String(GATEWAY_PORT), '127.0.0.1:9080']);
  });
});

/** ingress-nginx's annotation values for the limits of libs/gateway/src/limits.ts. */
function expectedIngressAnnotations(conf: string): Record<string, string> {
  const mib = 1024 * 1024;
  expect(GATEWAY_LIMITS.bodyBytes % mib).toBe(0);
  const seconds = (ms: number) => {
    expect(ms % 1000).toBe(0);
    return String(ms / 1000);
  };
  // The in-memory body buffer is the gateway's own (nginx-config.ts), not a limit: taken from the render.
  const bodyBuffer = /^ {2}client_body_buffer_size (\S+);$/m.exec(conf)?.[1];
  expect(bodyBuffer).toBeDefined();
  const prefix = 'nginx.ingress.kubernetes.io/';
  return {
    [`${prefix}proxy-body-size`]: `${GATEWAY_LIMITS.bodyBytes / mib}m`,
    [`${prefix}proxy-request-buffering`]: 'on',
    [`${prefix}client-body-buffer-size`]: bodyBuffer as string,
    [`${prefix}proxy-read-timeout`]: seconds(GATEWAY_LIMITS.upstreamTimeoutMs),
    [`${prefix}proxy-send-timeout`]: seconds(GATEWAY_LIMITS.upstreamTimeoutMs),
    [`${prefix}proxy-connect-timeout`]: seconds(GATEWAY_LIMITS.connectTimeoutMs),
  };
}

describe('limits: the Ingress and its controller enforce what the nginx gateway does (GATEWAY_LIMITS)', () => {
  const conf = committedComposeConfig();

  it.each(['base', ...OVERLAYS.map((o) => `overlays/${o}`)])('the Ingress of %s carries the limits as ingress-nginx annotations', (dir) => {
    const ingress = named(render(dir), 'Ingress', 'invoicing') as K8sObject;
    const annotations = ingress.metadata.annotations ?? {};
    const expectedAnnotations = expectedIngressAnnotations(conf);
    expect(Object.fromEntries(Object.keys(expectedAnnotations).map((k) => [k, annotations[k]]))).toEqual(expectedAnnotations);
    // No snippet: the limits are plain annotations, which controllers with snippets disabled still honour.
    expect(Object.keys(annotations).filter((k) => k.endsWith('-snippet'))).toEqual([]);
  });

  it('the same numbers are in the rendered gateway configuration', () => {
    expect(conf).toContain(`client_max_body_size ${GATEWAY_LIMITS.bodyBytes};`);
    expect(conf).toContain(`large_client_header_buffers ${GATEWAY_LIMITS.headBuffers} ${GATEWAY_LIMITS.lineBytes};`);
    expect(conf).toContain(`proxy_read_timeout ${GATEWAY_LIMITS.upstreamTimeoutMs}ms;`);
    expect(conf).toContain(`proxy_connect_timeout ${GATEWAY_LIMITS.connectTimeoutMs}ms;`);
  });

  it("deploy/README.md gives the controller's header buffers (a ConfigMap key, not an annotation) and forwarding defaults", () => {
    const readme = readFileSync(join(ROOT, 'deploy/README.md'), 'utf8');
    expect(GATEWAY_LIMITS.lineBytes % 1024).toBe(0);
    expect(readme).toContain(`large-client-header-buffers: "${GATEWAY_LIMITS.headBuffers} ${GATEWAY_LIMITS.lineBytes / 1024}k"`);
    for (const line of ['generate-request-id: "true"', 'use-forwarded-headers: "false"', 'compute-full-forwarded-for: "false"']) expect(readme).toContain(line);
  });
});

describe('HSTS where TLS ends: the Ingress of the prod overlay, never over plain HTTP (RFC 6797; docs/api.md section 10)', () => {
  const prefix = 'nginx.ingress.kubernetes.io/';
  const ingressOf = (dir: string) => named(render(dir), 'Ingress', 'invoicing') as K8sObject;
  /** Annotations that would add a response header on every location, plain HTTP included. */
  const headerAnnotations = (ingress: K8sObject) =>
    Object.entries(ingress.metadata.annotations ?? {}).filter(([key, value]) => key.endsWith('-snippet') || key === `${prefix}custom-headers` || /strict-transport-security/i.test(value));

  it('prod terminates TLS for every host it routes and redirects plain HTTP to it; the base and dev, plain HTTP, do neither', () => {
    const ingress = ingressOf('overlays/prod');
    const spec = ingress.spec as { tls?: { hosts: string[]; secretName: string }[]; rules: { host?: string }[] };
    const covered = new Set((spec.tls ?? []).flatMap((t) => t.hosts));
    expect(spec.rules.map((r) => r.host)).toEqual(spec.rules.map((r) => (r.host && covered.has(r.host) ? r.host : 'not covered by TLS')));
    expect(ingress.metadata.annotations?.[`${prefix}ssl-redirect`]).toBe('true');
    // ingress-nginx sends HSTS itself on TLS only (its ConfigMap keys, below); an annotation adding the
    // header would send it on plain HTTP too.
    expect(headerAnnotations(ingress)).toEqual([]);
    // The base and the dev overlay have no TLS, so neither a redirect to it nor HSTS.
    for (const dir of ['base', 'overlays/dev']) {
      const plain = ingressOf(dir);
      expect({ dir, tls: (plain.spec as { tls?: unknown }).tls, redirect: plain.metadata.annotations?.[`${prefix}ssl-redirect`], headers: headerAnnotations(plain) }).toEqual({
        dir,
        tls: undefined,
        redirect: undefined,
        headers: [],
      });
    }
  });

  it("deploy/README.md gives the controller's HSTS keys, the nginx gateway's policy (DEFAULT_HSTS)", () => {
    const readme = readFileSync(join(ROOT, 'deploy/README.md'), 'utf8');
    expect(hstsHeaderValue(DEFAULT_HSTS)).toBe(`max-age=${DEFAULT_HSTS.maxAgeSeconds}; includeSubDomains`);
    for (const line of [
      'hsts: "true"',
      `hsts-max-age: "${DEFAULT_HSTS.maxAgeSeconds}"`,
      `hsts-include-subdomains: "${DEFAULT_HSTS.includeSubDomains}"`,
      `hsts-preload: "${DEFAULT_HSTS.preload}"`,
      'ssl-redirect: "true"',
    ]) {
      expect(readme).toContain(line);
    }
  });

  it("compose's gateway is plain HTTP with no TLS load balancer it trusts: it never sends HSTS", () => {
    const conf = committedComposeConfig();
    expect(conf).toContain('  geo $gateway_from_tls_proxy {\n    default 0;\n  }');
    expect(conf).toContain('proxy_set_header X-Forwarded-Proto $gateway_scheme;');
    expect(parseNginxRouting(conf).listens.every((listen) => !/\bssl\b/.test(listen))).toBe(true);
  });
});
