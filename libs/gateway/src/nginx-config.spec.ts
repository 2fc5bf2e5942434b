import { GATEWAY_ROUTES, SERVICES } from '@invoicing/contracts';
import { GATEWAY_LIMITS } from './limits';
import { checkedRoutes, loopbackUpstreams, namedUpstreams, renderNginxConfig } from './nginx-config';

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

  it('states the limits of GATEWAY_LIMITS and sets, never appends, the forwarded fields', () => {
    expect(config).toContain(`client_max_body_size ${GATEWAY_LIMITS.bodyBytes};`);
    expect(config).toContain(`large_client_header_buffers ${GATEWAY_LIMITS.headBuffers} ${GATEWAY_LIMITS.lineBytes};`);
    expect(config).toContain(`proxy_read_timeout ${GATEWAY_LIMITS.upstreamTimeoutMs}ms;`);
    expect(config).toContain('proxy_set_header X-Forwarded-For $remote_addr;');
    expect(config).not.toContain('$proxy_add_x_forwarded_for');
  });

  it('answers every error of its own as a problem whose JSON is valid once the request id is filled in', () => {
    const bodies = [...config.matchAll(/return (\d{3}) '(.*)';/g)].map((m) => ({ status: Number(m[1]), json: m[2] }));
    expect(bodies.map((b) => b.status).sort()).toEqual([200, 200, 400, 404, 405, 408, 413, 414, 431, 500, 502, 503, 503, 504]);
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

describe('checkedRoutes', () => {
  it('refuses a malformed table rather than mis-routing', () => {
    expect(() => checkedRoutes([{ prefix: '/a/', service: 'auth-service' }])).toThrow(/must not end with/);
    expect(() => checkedRoutes([{ prefix: 'a', service: 'auth-service' }])).toThrow(/must start with/);
    expect(() => checkedRoutes([{ prefix: '/a;b', service: 'auth-service' }])).toThrow(/unreserved/);
    expect(() => checkedRoutes([{ prefix: '/a', service: 'auth-service' }, { prefix: '/a', service: 'invoice-service' }])).toThrow(/twice/);
    expect(() => checkedRoutes([{ prefix: '/a', service: 'nope' as never }])).toThrow(/no service/);
  });
});
