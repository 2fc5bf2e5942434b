import { GATEWAY_ROUTES, SERVICES } from '@invoicing/contracts';
import { INSTANCE_PORT_STEP, MAX_INSTANCES, stackInstances } from './instances';
import { GATEWAY_LIMITS } from './limits';
import { checkedRoutes, DEFAULT_HSTS, hstsHeaderValue, loopbackUpstreams, namedUpstreams, REFUSED_PATH, renderNginxConfig, upstreamServers } from './nginx-config';

const base = { listen: '127.0.0.1:8080', runtimeDir: '/run/gw/', accessLog: false as const, errorLog: 'stderr', workerProcesses: 1 };

describe('renderNginxConfig', () => {
  const config = renderNginxConfig({ ...base, upstreams: loopbackUpstreams() });

  it('has one exact and one prefix location per route of the platform table, longest prefix first, each to its service', () => {
    const locations = [...config.matchAll(/location (= |\^~ )(\S+) \{\n\s+proxy_pass http:\/\/(\S+);/g)].map((m) => ({ kind: m[1].trim(), path: m[2], upstream: m[3] }));
    expect(locations).toHaveLength(GATEWAY_ROUTES.length * 2);
    for (const { prefix, service } of GATEWAY_ROUTES) {
      const upstream = `service_${service.replace(/-/g, '_')}`;
      expect(locations).toEqual(expect.arrayContaining([{ kind: '=', path: prefix, upstream }, { kind: '^~', path: `${prefix}/`, upstream }]));
    }
    const order = locations.filter((l) => l.kind === '=').map((l) => l.path.length);
    expect(order).toEqual([...order].sort((a, b) => b - a));
  });

  it('points each upstream at the service it names, kept alive', () => {
    for (const [name, { port }] of Object.entries(SERVICES)) {
      expect(config).toContain(`upstream service_${name.replace(/-/g, '_')} {\n    server 127.0.0.1:${port} max_fails=0;\n    keepalive 64;`);
    }
    expect(renderNginxConfig({ ...base, upstreams: namedUpstreams() })).toContain('server auth-service:3001 max_fails=0;');
    expect(renderNginxConfig({ ...base, upstreams: loopbackUpstreams(100) })).toContain('server 127.0.0.1:3101 max_fails=0;');
  });

  it('with one server per upstream, tries it once and never passes a request on', () => {
    expect(config).toContain('proxy_next_upstream off;');
    expect(config).not.toMatch(/proxy_next_upstream (?!off)/);
    expect(config).not.toContain('proxy_next_upstream_tries');
    // A one-element list is the same as the address itself.
    const listed = Object.fromEntries(Object.entries(loopbackUpstreams()).map(([name, address]) => [name, [address]]));
    expect(renderNginxConfig({ ...base, upstreams: listed as never })).toBe(config);
  });

  it('states the limits of GATEWAY_LIMITS and sets, never appends, the forwarded fields', () => {
    expect(config).toContain(`client_max_body_size ${GATEWAY_LIMITS.bodyBytes};`);
    expect(config).toContain(`large_client_header_buffers ${GATEWAY_LIMITS.headBuffers} ${GATEWAY_LIMITS.lineBytes};`);
    expect(config).toContain(`proxy_read_timeout ${GATEWAY_LIMITS.upstreamTimeoutMs}ms;`);
    expect(config).toContain('proxy_set_header X-Forwarded-For $remote_addr;');
    expect(config).not.toContain('$proxy_add_x_forwarded_for');
  });

  it('answers every error of its own as a problem whose JSON is valid once the request id is filled in', () => {
    const bodies = [...config.matchAll(/return (\d{3}) '(.*)';/g)].map((m) => ({ status: Number(m[1]), json: m[2] }));
    // Two 400s: a malformed request, and a path refused as ambiguous.
    expect(bodies.map((b) => b.status).sort()).toEqual([200, 200, 400, 400, 404, 405, 408, 413, 414, 431, 500, 502, 503, 503, 504]);
    for (const { status, json } of bodies.filter((b) => b.status >= 400)) {
      const problem = JSON.parse(json.replace(/\\'/g, "'").replace('$gateway_request_id', 'req-1')) as Record<string, unknown>;
      expect(problem).toMatchObject({ status, request_id: 'req-1', type: expect.stringMatching(/^https:\/\//) });
    }
    expect(config).toContain('error_page 494 =431 /_gateway/problem/431;');
  });

  it('writes every temporary file and the pid under the runtime folder, and no status listener unless asked', () => {
    expect(config).toContain('pid /run/gw/nginx.pid;');
    expect(config).toContain('client_body_temp_path /run/gw/client_body_temp;');
    expect(config).not.toContain('stub_status');
    expect(renderNginxConfig({ ...base, upstreams: loopbackUpstreams(), statusListen: '127.0.0.1:9080' })).toContain('listen 127.0.0.1:9080;');
    expect(config).toContain('access_log off;');
    expect(renderNginxConfig({ ...base, upstreams: loopbackUpstreams(), accessLog: '/dev/stdout' })).toContain('access_log /dev/stdout gateway;');
  });
});

describe('renderNginxConfig with several instances of a service', () => {
  const upstreams = { ...loopbackUpstreams(), 'invoice-service': ['127.0.0.1:3002', '127.0.0.1:3012', '10.0.0.7:3002'] };
  const config = renderNginxConfig({ ...base, upstreams });
  const blockOf = (conf: string, service: string) => new RegExp(`upstream service_${service.replace(/-/g, '_')} \\{\\n([^}]*)\\}`).exec(conf)?.[1] ?? '';
  const locationsOf = (conf: string, service: string) =>
    [...conf.matchAll(/location (?:= |\^~ )\S+ \{\n([^}]*)\}/g)].map((m) => m[1]).filter((body) => body.includes(`http://service_${service.replace(/-/g, '_')};`));

  it('lists one server line per instance, none marked down after failures, kept alive', () => {
    const block = blockOf(config, 'invoice-service');
    expect([...block.matchAll(/^\s+server (\S+) max_fails=0;$/gm)].map((m) => m[1])).toEqual(upstreams['invoice-service']);
    expect(block).toContain('keepalive 64;');
    expect(block).not.toMatch(/fail_timeout|backup|down;/);
  });

  it('passes a request on to the next instance on a connection error only, never a sent POST or PATCH, at most once per instance', () => {
    const locations = locationsOf(config, 'invoice-service');
    expect(locations).toHaveLength(2);
    for (const body of locations) {
      expect(body).toMatch(/^\s+proxy_pass http:\/\/service_invoice_service;\n\s+proxy_next_upstream error;\n\s+proxy_next_upstream_tries 3;\n\s*$/);
    }
    // Not on timeouts, not on an instance's own 5xx, never a non-idempotent request already sent.
    expect(config).not.toMatch(/non_idempotent|proxy_next_upstream [^;]*(timeout|http_)/);
    // The other services keep their one try.
    for (const body of locationsOf(config, 'client-service')) expect(body).not.toContain('proxy_next_upstream');
    expect(config).toContain('  proxy_next_upstream off;');
    // When every instance refused, $upstream_connect_time ends in "-": the 503 stays a 503.
    expect(config).toContain('"~(^|, )-$" 1;');
  });

  it('refuses an upstream with no server, or one server twice', () => {
    expect(() => renderNginxConfig({ ...base, upstreams: { ...loopbackUpstreams(), 'auth-service': [] } })).toThrow(/no upstream server for auth-service/);
    expect(() => renderNginxConfig({ ...base, upstreams: { ...loopbackUpstreams(), 'auth-service': ['a:1', 'a:1'] } })).toThrow(/twice/);
    expect(() => upstreamServers('auth-service', 'a:1; evil')).toThrow(/host:port/);
    expect(upstreamServers('auth-service', 'a:1')).toEqual(['a:1']);
  });

  it('loopbackUpstreams(offset, host, N): N instances of every service but settings-web, instance i at port + 10 × (i - 1)', () => {
    const three = loopbackUpstreams(20000, '127.0.0.1', 3);
    expect(three['auth-service']).toEqual(['127.0.0.1:23001', '127.0.0.1:23011', '127.0.0.1:23021']);
    expect(three['expense-service']).toEqual(['127.0.0.1:23006', '127.0.0.1:23016', '127.0.0.1:23026']);
    expect(three['settings-web']).toBe('127.0.0.1:23010');
    expect(loopbackUpstreams(0, '127.0.0.1', 1)).toEqual(loopbackUpstreams());
    expect(() => loopbackUpstreams(0, '127.0.0.1', MAX_INSTANCES + 1)).toThrow(/1 to 4/);
    const rendered = renderNginxConfig({ ...base, upstreams: three });
    expect(blockOf(rendered, 'settings-web')).not.toContain('#');
    expect(locationsOf(rendered, 'auth-service').every((body) => body.includes('proxy_next_upstream_tries 3;'))).toBe(true);
  });

  it('the stack\'s instance ports collide with no other port of the platform, at the most instances', () => {
    const rows = stackInstances({ ...SERVICES, gateway: { port: 8080, kind: 'gateway' } }, MAX_INSTANCES);
    expect(new Set(rows.map((r) => r.port)).size).toBe(rows.length);
    expect(rows.filter((r) => r.name === 'settings-web' || r.name === 'gateway').map((r) => r.instance)).toEqual([1, 1]);
    expect(rows.filter((r) => r.name === 'auth-service').map((r) => r.port)).toEqual([3001, 3001 + INSTANCE_PORT_STEP, 3001 + 2 * INSTANCE_PORT_STEP, 3001 + 3 * INSTANCE_PORT_STEP]);
    expect(() => stackInstances({ a: { port: 3001, kind: 'auth' }, b: { port: 3011, kind: 'resource' } }, 2)).toThrow(/port 3011 would serve both a instance 2 and b/);
  });
});

describe('checkedRoutes', () => {
  it('refuses a malformed table rather than mis-routing', () => {
    expect(() => checkedRoutes([{ prefix: '/a/', service: 'auth-service' }])).toThrow(/must not end with/);
    expect(() => checkedRoutes([{ prefix: 'a', service: 'auth-service' }])).toThrow(/must start with/);
    expect(() => checkedRoutes([{ prefix: '/a;b', service: 'auth-service' }])).toThrow(/unreserved/);
    expect(() => checkedRoutes([{ prefix: '/a', service: 'auth-service' }, { prefix: '/a', service: 'invoice-service' }])).toThrow(/twice/);
    expect(() => checkedRoutes([{ prefix: '/a', service: 'nope' as never }])).toThrow(/no service/);
    // A prefix no request could reach: the gateway refuses such paths before routing.
    for (const prefix of ['/a//b', '/a/./b', '/a/..', '/.']) expect(() => checkedRoutes([{ prefix, service: 'auth-service' }])).toThrow(/empty or dot segment/);
  });
});

/** The map key as nginx reads it: a double-quoted string, in which nginx unescapes `\\\\` and `\\"`. */
function nginxUnquoted(quoted: string): string {
  return quoted.slice(1, -1).replace(/\\(["\\])/g, '$1');
}

describe('the path a request is routed on is the path it is forwarded with (docs/api.md section 8, ADR 0029)', () => {
  const config = renderNginxConfig({ ...base, upstreams: loopbackUpstreams() });

  // Each of these is read one way by nginx ($uri: decoded, dot segments resolved, slashes merged) and
  // forwarded as sent, to a service that reads it another way.
  const refused = [
    '/internal/v1/objects/cli_1%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients',
    '/internal/v1/objects/cli_1%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients',
    '/api/v1/clients/a%2fb',
    '/api/v1/clients/a%5Cb',
    '/api/v1/clients/a%5cb',
    '/api/v1/clients/a\\b',
    '/api/v1/clients/%2E%2E/x',
    '/api/v1/clients/%2e',
    '/api/v1/clients/a%2eb',
    '/api/v1/clients/./x',
    '/api/v1/clients/../invoices',
    '/api/v1/clients/.',
    '/api/v1/clients/..',
    '/api/v1/clients/..?limit=1',
    '/api/v1//clients',
    '//api/v1/clients',
    '/api/v1/clients/cli_1;jsessionid=1',
    '/api/v1/clients/cli_1#x/../..',
    '/api/v1/clients/%c0%ae%c0%ae/x',
    '/api/v1/clients/%C0%AF',
    '/api/v1/clients/%C1%9C',
    '/api/v1/clients/%e0%80%ae',
    '/api/v1/clients/%F0%80%80%AE',
  ];
  // Ordinary escapes, dots inside a segment, and anything at all in the query pass byte for byte.
  const passed = [
    '/api/v1/clients',
    '/api/v1/clients/cli_0192f2a4c7e97b3c8d1e2f3a4b5c6d7e',
    '/api/v1/clients/a%20b',
    '/api/v1/clients/user%40example.com',
    '/api/v1/clients/100%25',
    '/api/v1/clients/%E2%82%AC',
    '/api/v1/clients/%ff',
    '/api/v1/openapi.json',
    '/.well-known/oauth-authorization-server',
    '/api/v1/docs/redoc.standalone.js',
    '/api/v1/clients/...',
    '/api/v1/clients/.hidden',
    '/api/v1/clients?q=a%20b&next=%2F..%2F&path=/../x;y#z',
    '/api/v1/clients/?x=//',
  ];

  it('REFUSED_PATH refuses every path nginx and a service could read differently, and nothing else', () => {
    expect(refused.filter((path) => !REFUSED_PATH.test(path))).toEqual([]);
    expect(passed.filter((path) => REFUSED_PATH.test(path))).toEqual([]);
  });

  it('renders that very pattern, case-insensitive, over the request target as sent ($request_uri)', () => {
    const key = /map \$request_uri \$gateway_path_refused \{\n\s+("(?:[^"\\]|\\.)*") 1;\n\s+default "";\n\s+\}/.exec(config)?.[1];
    expect(key).toBeDefined();
    expect(nginxUnquoted(key as string)).toBe(`~*${REFUSED_PATH.source.replace(/\\\//g, '/')}`);
  });

  it('checks it in the server, before any location is chosen, and answers from an internal problem location', () => {
    const server = config.slice(config.indexOf('  server {'));
    const check = server.indexOf('    if ($gateway_path_refused) {\n      rewrite ^ /_gateway/problem/400-path? last;\n    }');
    expect(check).toBeGreaterThan(0);
    expect(check).toBeLessThan(server.indexOf('    location '));
    const problem = /location = \/_gateway\/problem\/400-path \{\n\s+internal;\n[^}]*return 400 '(.*)';\n\s+\}/.exec(config)?.[1];
    expect(JSON.parse((problem as string).replace('$gateway_request_id', 'req-1'))).toMatchObject({
      status: 400,
      type: 'https://docs.invoicing.example/problems/bad-request',
      request_id: 'req-1',
      detail: expect.stringContaining('ambiguous'),
    });
    // Every proxied location forwards the request target unchanged: no URI on proxy_pass.
    expect(config).not.toMatch(/proxy_pass http:\/\/[^;]*\//);
  });
});

describe('Strict-Transport-Security: only where the request came over TLS (RFC 6797)', () => {
  const config = renderNginxConfig({ ...base, upstreams: loopbackUpstreams() });
  const withProxies = renderNginxConfig({ ...base, upstreams: loopbackUpstreams(), tlsProxies: ['10.0.0.0/8', '192.0.2.1', '2001:db8::/32'] });

  it('by default: one year with subdomains, sent only when the scheme is https, on proxied answers and its own', () => {
    expect(hstsHeaderValue(DEFAULT_HSTS)).toBe('max-age=31536000; includeSubDomains');
    expect(config).toContain('  map $gateway_scheme $gateway_hsts {\n    https "max-age=31536000; includeSubDomains";\n    default "";\n  }');
    // Server level (the proxied locations inherit it), and every location with add_header of its own.
    const locationsWithHeaders = [...config.matchAll(/location [^{]+\{\n((?:(?!\n {4}\}).)*)\n {4}\}/gs)].map((m) => m[1]).filter((body) => body.includes('add_header'));
    expect(locationsWithHeaders.length).toBeGreaterThan(10);
    for (const body of locationsWithHeaders) expect(body).toContain('add_header Strict-Transport-Security $gateway_hsts always;');
    expect(config).toContain('    add_header Strict-Transport-Security $gateway_hsts always;\n');
    // A service's own never passes: the policy is said once, where TLS ends.
    expect(config).toContain('  proxy_hide_header Strict-Transport-Security;');
  });

  it("believes X-Forwarded-Proto only from the TLS proxies it is given, for HSTS and for the services' X-Forwarded-Proto", () => {
    expect(config).toContain('  geo $gateway_from_tls_proxy {\n    default 0;\n  }');
    expect(withProxies).toContain('  geo $gateway_from_tls_proxy {\n    default 0;\n    10.0.0.0/8 1;\n    192.0.2.1 1;\n    2001:db8::/32 1;\n  }');
    expect(config).toContain('  map "$scheme:$gateway_from_tls_proxy:$http_x_forwarded_proto" $gateway_scheme {\n    "~^https:" https;\n    "http:1:https" https;\n    default http;\n  }');
    expect(config).toContain('proxy_set_header X-Forwarded-Proto $gateway_scheme;');
    expect(() => renderNginxConfig({ ...base, upstreams: loopbackUpstreams(), tlsProxies: ['10.0.0.0/8; evil'] })).toThrow(/address or a CIDR block/);
    expect(() => renderNginxConfig({ ...base, upstreams: loopbackUpstreams(), tlsProxies: ['lb.example'] })).toThrow(/address or a CIDR block/);
  });

  it('takes a policy of its own, or none; preload only as hstspreload.org accepts it', () => {
    const none = renderNginxConfig({ ...base, upstreams: loopbackUpstreams(), hsts: false });
    expect(none).not.toContain('$gateway_hsts');
    expect(none).toContain('proxy_set_header X-Forwarded-Proto $gateway_scheme;');
    const preload = renderNginxConfig({ ...base, upstreams: loopbackUpstreams(), hsts: { maxAgeSeconds: 63072000, includeSubDomains: true, preload: true } });
    expect(preload).toContain('https "max-age=63072000; includeSubDomains; preload";');
    expect(hstsHeaderValue({ maxAgeSeconds: 600, includeSubDomains: false, preload: false })).toBe('max-age=600');
    expect(() => hstsHeaderValue({ maxAgeSeconds: 600, includeSubDomains: true, preload: true })).toThrow(/preload needs/);
    expect(() => hstsHeaderValue({ maxAgeSeconds: 31536000, includeSubDomains: false, preload: true })).toThrow(/preload needs/);
    expect(() => hstsHeaderValue({ maxAgeSeconds: -1, includeSubDomains: false, preload: false })).toThrow(/whole number/);
  });
});
