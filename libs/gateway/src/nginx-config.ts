import { GATEWAY_PORT, GATEWAY_ROUTES, GatewayRoute, PROBLEM_TITLES, PROBLEM_TYPE_BASE, SERVICES, ServiceName } from '@invoicing/contracts';
import { instancesOf, instancePort } from './instances';
import { GATEWAY_LIMITS } from './limits';

/** `host:port` of a service's one instance, or of each of its instances (one `server` line each). */
export type UpstreamServers = string | readonly string[];

/** Where and how one nginx gateway runs; everything else comes from the platform table. */
export interface NginxGatewayOptions {
  /**
   * `host:port` of each service (no scheme, no path): `127.0.0.1:3001`, `auth-service:3001`; or a
   * list, one per instance (`['127.0.0.1:3001', '127.0.0.1:3011']`): a connection an instance
   * refuses is then tried on the next one (see upstreamBlock).
   */
  upstreams: Record<ServiceName, UpstreamServers>;
  /** The public listener: `127.0.0.1:8080`, `8080` (every address). */
  listen: string;
  /** Listener of nginx's stub_status at `/stub_status`; none when undefined. Never the public one. */
  statusListen?: string;
  /** A writable folder for the pid file and the temporary files of buffered bodies. */
  runtimeDir: string;
  /** Access log destination (`/dev/stdout`, a file) or false for none. One JSON object per line. */
  accessLog: string | false;
  /** Error log destination: `stderr` or a file. */
  errorLog: string;
  /** nginx worker processes: 1 on the 2-core dev machine (it measured at direct speed), `auto` in a container. */
  workerProcesses: number | 'auto';
  /** Local address of the upstream connections (nginx's proxy_bind); the system's choice when unset. */
  proxyBind?: string;
  /** Longest wait for an upstream's response before a 504. */
  upstreamTimeoutMs?: number;
  /** The route table; the platform's own unless a test narrows it. */
  routes?: readonly GatewayRoute[];
  /**
   * Share of requests the gateway marks sampled in the `traceparent` it passes on (0 to 100; default
   * DEFAULT_TRACE_SAMPLE_PERCENT). The services sample by their parent, so this is the platform's
   * head sampling: spans are recorded and exported for this share of requests only (docs/observability.md).
   */
  traceSamplePercent?: number;
  /**
   * Strict-Transport-Security (RFC 6797) on every answer to a request that reached the platform over
   * TLS: over TLS of this nginx, or from one of `tlsProxies` saying `X-Forwarded-Proto: https`. Never
   * on plain HTTP (RFC 6797 section 7.2), so the local stack and compose, plain HTTP, never send it.
   * DEFAULT_HSTS unless given; false for none.
   */
  hsts?: HstsPolicy | false;
  /**
   * Addresses or CIDR blocks of the load balancers in front of the gateway that terminate TLS: their
   * `X-Forwarded-Proto` is believed (HSTS, and the X-Forwarded-Proto the services get). Nobody
   * else's: a caller on plain HTTP cannot make itself look secure. None by default.
   */
  tlsProxies?: readonly string[];
}

/** What Strict-Transport-Security says (RFC 6797 section 6.1). */
export interface HstsPolicy {
  maxAgeSeconds: number;
  includeSubDomains: boolean;
  /** Asks browsers' preload lists to carry the host (hstspreload.org): a commitment hard to undo, so the domain owner's choice. */
  preload: boolean;
}

/**
 * One year, subdomains included, no preload: what ingress-nginx sends by default (its ConfigMap keys
 * hsts-max-age, hsts-include-subdomains, hsts-preload), so the Kubernetes base URL and this gateway
 * say the same (deploy/README.md, "The Ingress controller"; deploy/tests compares them).
 */
export const DEFAULT_HSTS: HstsPolicy = { maxAgeSeconds: 31536000, includeSubDomains: true, preload: false };

/** The header's value; refuses a policy browsers would ignore or preload lists refuse. */
export function hstsHeaderValue(policy: HstsPolicy): string {
  if (!(Number.isInteger(policy.maxAgeSeconds) && policy.maxAgeSeconds >= 0)) throw new Error(`HSTS max-age must be a whole number of seconds, not ${policy.maxAgeSeconds}`);
  if (policy.preload && !(policy.includeSubDomains && policy.maxAgeSeconds >= DEFAULT_HSTS.maxAgeSeconds)) {
    throw new Error(`HSTS preload needs includeSubDomains and a max-age of at least ${DEFAULT_HSTS.maxAgeSeconds} seconds`);
  }
  return [`max-age=${policy.maxAgeSeconds}`, ...(policy.includeSubDomains ? ['includeSubDomains'] : []), ...(policy.preload ? ['preload'] : [])].join('; ');
}

/**
 * Raw request paths the gateway refuses (400), tested against the request target up to its query:
 * those where the path nginx routes on ($uri: percent-decoded, dot segments resolved, slashes merged)
 * and the path it forwards (the request target as sent: proxy_pass without a URI) could mean two
 * different things, to nginx and to the service. `/internal/v1/objects/x%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients`
 * is routed by nginx as `/api/v1/clients`, and Fastify's router reads it as the internal route with a
 * slash-laden id (ADR 0029, addendum). Refused:
 * - an encoded slash, backslash or dot (`%2F`, `%5C`, `%2E`, any case), and a backslash: nginx
 *   decodes them into separators and dot segments before it routes, services decode them into one
 *   parameter, and some stacks read a backslash as a slash;
 * - a dot segment (`/./`, `/../`, or one that ends the path): resolved by nginx, not by the service;
 * - an empty segment (`//`): merged by nginx (merge_slashes), not by the service;
 * - `;` and `#`: path parameters, and a fragment that has no place in a request (RFC 9112 section
 *   3.2); routers disagree about both (find-my-way stops at `#`, and at `;` when asked);
 * - an overlong UTF-8 sequence (`%C0`, `%C1`, `%E0%80`-`%E0%9F`, `%F0%80`-`%F0%8F`), the old way of
 *   spelling a slash or a dot that a lenient decoder turns back into one.
 * Everything else, `%20`, `%40` or `%25` included, is forwarded byte for byte. No id, route or client
 * of the API needs any of these. Forwarding the normalised path instead (`proxy_pass` with `$uri`)
 * was rejected: nginx would pass the decoded path unescaped (a decoded `?`, space or CR would change
 * the request line) and the services would no longer see the path the caller signed or logged.
 * libs/service-kit/src/http/ambiguous-path.ts applies the same rule in every service.
 */
const REFUSED_PATH_SOURCE = String.raw`^[^?]*(?:%2[EF]|%5C|\\|//|/[.][.]?(?:[/?]|$)|[;#]|%C[01]|%E0%[89]|%F0%8)`;
export const REFUSED_PATH = new RegExp(REFUSED_PATH_SOURCE, 'i');

/** Where a refused path is answered from, and what it is told. */
const REFUSED_PATH_PROBLEM = '/_gateway/problem/400-path';
const REFUSED_PATH_DETAIL =
  'The request path is ambiguous: it holds an encoded slash, backslash or dot (%2F, %5C, %2E), a backslash, a dot segment (/./ or /../), an empty segment (//), a semicolon, a # or an overlong UTF-8 sequence. Send the path as the API documents it.';

/**
 * Production's default share of sampled requests: the spans exported and stored scale with it (the
 * services' per-request cost of tracing does not, docs/perf.md). The local stack and the tests
 * sample everything.
 */
export const DEFAULT_TRACE_SAMPLE_PERCENT = 10;

/** The gateway's own problems: status → detail; type and title are the services' (PROBLEM_TITLES). */
const PROBLEMS: Record<number, string> = {
  400: 'The request is malformed: its request line, percent-encoding or Host header (exactly one is required).',
  404: 'No route for this path.',
  405: 'This method is not accepted.',
  408: 'The request was not received in time.',
  413: `The request body is larger than the ${GATEWAY_LIMITS.bodyBytes} bytes the gateway accepts.`,
  414: `The request line is longer than the ${GATEWAY_LIMITS.lineBytes} bytes this API accepts.`,
  431: `A request header is longer than ${GATEWAY_LIMITS.lineBytes} bytes, or all of them together longer than ${GATEWAY_LIMITS.lineBytes * GATEWAY_LIMITS.headBuffers}.`,
  500: 'An unexpected error occurred. Quote the request_id when you report it.',
  502: 'The service closed the connection without an answer. Retry later; quote the request_id if it persists.',
  503: 'The service is not reachable right now. Retry later.',
  504: 'The service did not answer in time. Retry later; quote the request_id if it persists.',
};

/** nginx's internal code for "request header too large", answered as 431 (RFC 6585). */
const NGINX_HEADER_TOO_LARGE = 494;

/** `addr` or `addr/bits`, IPv4 or IPv6: what nginx's geo takes. */
function checkedAddresses(what: string, addresses: readonly string[]): string[] {
  for (const address of addresses) {
    if (!/^(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)(?:\/[0-9]{1,3})?$/.test(address)) throw new Error(`${what} "${address}" must be an address or a CIDR block`);
  }
  return [...addresses];
}

/** A string for nginx.conf in double quotes (nginx unescapes `\\` and `\"` in them). */
const nginxQuoted = (text: string) => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The internal locations the problems are served from (a URI, not a named location: a request whose line did not parse has no URI to redirect a named location from). */
const problemPath = (status: number) => `/_gateway/problem/${status}`;

/** Upstream block name of a service. */
const upstreamName = (service: ServiceName) => `service_${service.replace(/-/g, '_')}`;

/** The servers of one upstream: at least one, none twice (a retry must reach another instance). */
export function upstreamServers(service: string, servers: UpstreamServers | undefined): string[] {
  const list = typeof servers === 'string' ? [servers] : [...(servers ?? [])];
  if (list.length === 0) throw new Error(`no upstream server for ${service}`);
  for (const server of list) {
    if (!/^[^\s;{}#'"]+$/.test(server)) throw new Error(`upstream server "${server}" of ${service} must be host:port`);
  }
  if (new Set(list).size !== list.length) throw new Error(`upstream ${service} lists a server twice: ${list.join(', ')}`);
  return list;
}

/**
 * An upstream block. One server: one try, as ever (`proxy_next_upstream off` at http level). Several
 * (several instances of the service): round robin, and `proxyNextUpstream` says which failures move a
 * request on to the next instance.
 *
 * max_fails=0 for every server: nginx never takes an instance out of the rotation on its own. A down
 * instance costs one refused connect (microseconds on loopback, one RST in a cluster) before the next
 * one answers, and the gateway needs no health state that could lag behind a restarted instance.
 */
function upstreamBlock(service: ServiceName, servers: string[]): string[] {
  return [
    `  upstream ${upstreamName(service)} {`,
    ...(servers.length > 1
      ? [
          `    # ${servers.length} instances, round robin. A request whose connection is refused, or breaks before an`,
          '    # answer, moves on to the next instance (proxy_next_upstream error), except a POST or PATCH once',
          '    # sent: never sent twice. No instance is ever marked down (max_fails=0).',
        ]
      : []),
    ...servers.map((server) => `    server ${server} max_fails=0;`),
    '    keepalive 64;',
    '    keepalive_requests 100000;',
    '    keepalive_timeout 30s;',
    '  }',
  ];
}

/**
 * In each location of a service with several instances: which failures pass a request on to the next
 * instance, and how many instances one request may try (each at most once).
 *
 * - `error`: the connection was refused or reset, or broke before a response header came back. A
 *   refused connect (an instance restarting, killed, not started yet) is the case this exists for:
 *   nothing was sent, so any request may go to the next instance, and the caller gets an answer
 *   instead of a 503.
 * - No `non_idempotent`: once a POST or PATCH has been sent, nginx never sends it again, whatever
 *   happens to the connection (the instance may have acted on it: a token issued, a refresh token
 *   rotated, an invoice created). The caller gets the 502 and decides (Idempotency-Key, ADR 0007).
 * - A GET IS passed on after a read error (so would HEAD, PUT, DELETE be, which nginx counts as
 *   idempotent; the API has no PUT or DELETE, and its GETs only read): it changes nothing, so asking
 *   the next instance is safe and answers the caller rather than failing a read because one instance
 *   went away mid-request. The price: a GET that crashes the instance it reaches is carried to the
 *   next one too, at most once per instance (the tries below).
 * - Not `timeout`: a slow instance is not asked again (the request may still be running there, and the
 *   caller would wait one upstream timeout per instance); the caller gets the 504.
 * - Not `http_5xx`: an instance's own answers, a 503 of a dependency included, pass through untouched.
 *
 * With every instance refusing, `$upstream_connect_time` ends in `-` ("-, -"): still the 503 problem;
 * a connection that broke after it was made (the last try connected) is the 502 problem.
 */
function proxyNextUpstream(servers: string[]): string[] {
  return servers.length > 1 ? ['      proxy_next_upstream error;', `      proxy_next_upstream_tries ${servers.length};`] : [];
}

/**
 * The prefix routes, longest first; refuses a malformed table (the route table is data, and a typo
 * should fail the render, not mis-route in production).
 */
export function checkedRoutes(routes: readonly GatewayRoute[]): GatewayRoute[] {
  const seen = new Set<string>();
  for (const { prefix, service } of routes) {
    if (!/^\/[A-Za-z0-9._~\-/]*[A-Za-z0-9._~-]$/.test(prefix)) {
      throw new Error(`route prefix "${prefix}" must start with "/", must not end with "/" and may hold only unreserved characters`);
    }
    if (REFUSED_PATH.test(`${prefix}/`)) throw new Error(`route prefix "${prefix}" holds an empty or dot segment, which the gateway refuses (REFUSED_PATH)`);
    if (seen.has(prefix)) throw new Error(`route prefix "${prefix}" is listed twice`);
    if (!(service in SERVICES)) throw new Error(`route prefix "${prefix}" names no service of the platform table: ${service}`);
    seen.add(prefix);
  }
  return [...routes].sort((a, b) => b.prefix.length - a.prefix.length);
}

/** A JSON problem body with nginx variables in it (the request id holds only [A-Za-z0-9._:-]). */
function problemBody(status: number, detail = PROBLEMS[status]): string {
  const [slug, title] = PROBLEM_TITLES[status];
  const json = JSON.stringify({ type: `${PROBLEM_TYPE_BASE}${slug}`, title, status, detail, request_id: '@@REQUEST_ID@@' });
  // nginx strings: single-quoted, so escape \ and ' ; `$` only appears in the variable itself.
  return `'${json.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace('@@REQUEST_ID@@', '$gateway_request_id')}'`;
}

const ms = (value: number) => `${value}ms`;

/** `$gateway_trace_flags`: "01" (sampled) for `percent` % of requests, by a hash of the random request id. */
function sampling(percent: number): string[] {
  if (!(Number.isFinite(percent) && percent >= 0 && percent <= 100)) throw new Error(`trace sample percent must be 0 to 100, not ${percent}`);
  if (percent === 100 || percent === 0) return ['  map $request_id $gateway_trace_flags {', `    default ${percent === 100 ? '01' : '00'};`, '  }'];
  return ['  split_clients "${request_id}" $gateway_trace_flags {', `    ${percent}% 01;`, '    * 00;', '  }'];
}

/**
 * The whole nginx.conf of the gateway: the platform's one base URL. Every route of GATEWAY_ROUTES is
 * a prefix matched on a segment boundary (`= /p` and `/p/`), so a route cannot exist here and not in
 * the Ingress or the SDK's spec (one table). What a service never sees is answered here, as a
 * problem+json in the services' own format with the request id: no route (404), a malformed request
 * (400), a body over GATEWAY_LIMITS.bodyBytes (413), a request line or header over lineBytes (414,
 * 431), an upstream refusing connections (503), dropping one (502) or too slow (504). An upstream's
 * own answers, errors included, pass through untouched.
 */
export function renderNginxConfig(options: NginxGatewayOptions): string {
  const routes = checkedRoutes(options.routes ?? GATEWAY_ROUTES);
  const services = [...new Set(routes.map((r) => r.service))].sort();
  const servers = Object.fromEntries(services.map((service) => [service, upstreamServers(service, options.upstreams[service])])) as Record<ServiceName, string[]>;
  const run = options.runtimeDir.replace(/\/$/, '');
  const timeout = options.upstreamTimeoutMs ?? GATEWAY_LIMITS.upstreamTimeoutMs;
  const hsts = options.hsts === false ? undefined : hstsHeaderValue(options.hsts ?? DEFAULT_HSTS);
  const tlsProxies = checkedAddresses('TLS proxy', options.tlsProxies ?? []);
  /** The headers of the gateway's own answers (a location with add_header of its own inherits none of the server's). */
  const ownHeaders = [
    '      add_header Cache-Control no-store always;',
    '      add_header X-Request-Id $gateway_request_id always;',
    ...(hsts ? ['      add_header Strict-Transport-Security $gateway_hsts always;'] : []),
  ];
  const lines: string[] = [];
  const add = (...more: string[]) => lines.push(...more);

  add(
    '# The platform gateway. GENERATED by libs/gateway (renderNginxConfig) from GATEWAY_ROUTES of',
    '# libs/contracts/src/platform.ts: edit those, then render again (libs/gateway/README.md). Do not edit.',
    `worker_processes ${options.workerProcesses};`,
    `pid ${run}/nginx.pid;`,
    `error_log ${options.errorLog} warn;`,
    '',
    'events {',
    '  worker_connections 4096;',
    '}',
    '',
    'http {',
    '  server_tokens off;',
    '  # Temporary files of buffered bodies, in the writable runtime folder (the root may be read-only).',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${run}/${kind}_temp;`),
    '',
    '  # X-Request-Id: the caller\'s when it is a sane token (the services\' own rule), else a new one.',
    '  map $http_x_request_id $gateway_request_id {',
    '    "~^[A-Za-z0-9._:-]{1,128}$" $http_x_request_id;',
    '    default $request_id;',
    '  }',
    '  # W3C Trace Context: the gateway is a hop of the trace. It keeps the caller\'s trace id (or starts a',
    '  # trace with its random request id, 32 hex digits) and passes on a parent id of its own, so the',
    '  # service\'s span is the gateway\'s child, never the caller\'s.',
    '  map $http_traceparent $gateway_trace_id {',
    '    "~^00-(?<trace>[0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$" $trace;',
    '    default $request_id;',
    '  }',
    '  # Head sampling, decided here for every request: a caller\'s own "sampled" flag is not obeyed, or',
    '  # anyone could make every one of their requests cost a full trace.',
    ...sampling(options.traceSamplePercent ?? DEFAULT_TRACE_SAMPLE_PERCENT),
    '  # A new span id per request: the first 16 of the request id\'s 32 random hex digits (nginx has one',
    '  # random variable; for a trace the gateway starts, its span id is thus the trace id\'s first half).',
    '  map $request_id $gateway_span_id {',
    '    "~^(?<span>[0-9a-f]{16})" $span;',
    '  }',
    '  # The Host the caller asked for; an HTTP/1.0 caller may send none, but the upstream speaks HTTP/1.1.',
    '  map $http_host $gateway_host {',
    '    "" "$server_addr:$server_port";',
    '    default $http_host;',
    '  }',
    '  # The path the caller asked for, for the access log ($uri is the internal location after an error page).',
    '  map $request_uri $gateway_path {',
    '    "~^(?<path>[^?]*)" $path;',
    '  }',
    '  # The upstream that refused the connection (no connect time) is absent: 503; one that dropped it: 502.',
    '  map $upstream_connect_time $gateway_upstream_refused {',
    '    "~(^|, )-$" 1;',
    '    default "";',
    '  }',
    '  # A path nginx would route one way and the service read another is refused, not forwarded: nginx',
    '  # routes on $uri (decoded, dot segments resolved, slashes merged) but forwards the request target as',
    '  # sent. REFUSED_PATH of libs/gateway/src/nginx-config.ts says which, and why refusing is the safer way.',
    '  map $request_uri $gateway_path_refused {',
    `    ${nginxQuoted(`~*${REFUSED_PATH_SOURCE}`)} 1;`,
    '    default "";',
    '  }',
    '  # The scheme the caller used: https over TLS of this nginx, or when a load balancer that terminated TLS',
    '  # (tlsProxies) says so. A caller\'s own X-Forwarded-Proto is not believed.',
    '  geo $gateway_from_tls_proxy {',
    '    default 0;',
    ...tlsProxies.map((address) => `    ${address} 1;`),
    '  }',
    '  map "$scheme:$gateway_from_tls_proxy:$http_x_forwarded_proto" $gateway_scheme {',
    '    "~^https:" https;',
    '    "http:1:https" https;',
    '    default http;',
    '  }',
  );
  if (hsts) {
    add(
      '  # HSTS over TLS only: a browser ignores it on plain HTTP, and RFC 6797 section 7.2 forbids sending it there.',
      '  map $gateway_scheme $gateway_hsts {',
      `    https ${nginxQuoted(hsts)};`,
      '    default "";',
      '  }',
    );
  }
  if (options.accessLog) {
    add(
      '  log_format gateway escape=json \'{"time":"$time_iso8601","service":"gateway","request_id":"$gateway_request_id",\'',
      '    \'"trace_id":"$gateway_trace_id","method":"$request_method","path":"$gateway_path","status":$status,\'',
      '    \'"bytes_in":$request_length,"bytes_out":$bytes_sent,"duration_s":$request_time,\'',
      '    \'"upstream":"$upstream_addr","upstream_status":"$upstream_status","upstream_s":"$upstream_response_time"}\';',
      `  access_log ${options.accessLog} gateway;`,
    );
  } else {
    add('  access_log off;');
  }
  add(
    '',
    '  # Limits (libs/gateway/src/limits.ts): the body is buffered whole before it goes upstream, so a',
    '  # service never waits on a slow upload and its early answers need no special care.',
    `  client_max_body_size ${GATEWAY_LIMITS.bodyBytes};`,
    '  client_body_buffer_size 64k;',
    `  client_header_buffer_size 4k;`,
    `  large_client_header_buffers ${GATEWAY_LIMITS.headBuffers} ${GATEWAY_LIMITS.lineBytes};`,
    '  keepalive_timeout 65s;',
    '  keepalive_requests 10000;',
    '',
    '  # To every upstream: HTTP/1.1 kept alive, the path and query exactly as sent, the caller\'s hop-by-hop',
    '  # fields dropped (nginx sends none of them), and the forwarded fields SET, never appended: the services',
    '  # believe X-Forwarded-For from the gateway only, so a caller must not be able to forge it.',
    '  proxy_http_version 1.1;',
    '  proxy_set_header Connection "";',
    '  proxy_set_header Host $gateway_host;',
    '  proxy_set_header X-Request-Id $gateway_request_id;',
    '  proxy_set_header X-Forwarded-For $remote_addr;',
    '  proxy_set_header X-Forwarded-Proto $gateway_scheme;',
    '  proxy_set_header X-Forwarded-Host $gateway_host;',
    '  proxy_set_header traceparent 00-$gateway_trace_id-$gateway_span_id-$gateway_trace_flags;',
    '  proxy_set_header Keep-Alive "";',
    '  proxy_set_header TE "";',
    '  proxy_set_header Proxy-Connection "";',
    '  # The upstream echoes the id it was given; the gateway states it once, on every answer.',
    '  proxy_hide_header X-Request-Id;',
    '  # HSTS is said where TLS ends (here, or the Ingress), once: never a service\'s own, which cannot know.',
    '  proxy_hide_header Strict-Transport-Security;',
    `  proxy_connect_timeout ${ms(Math.min(GATEWAY_LIMITS.connectTimeoutMs, timeout))};`,
    `  proxy_send_timeout ${ms(timeout)};`,
    `  proxy_read_timeout ${ms(timeout)};`,
    '  # One try: a service\'s 503 (a dependency down) is its answer, not a reason to ask again. nginx still',
    '  # retries once on a fresh connection when a kept-alive one turns out closed before any byte came back.',
    '  proxy_next_upstream off;',
  );
  if (options.proxyBind) add(`  proxy_bind ${options.proxyBind};`);
  for (const service of services) add('', ...upstreamBlock(service, servers[service]));
  add(
    '',
    '  server {',
    `    listen ${options.listen} default_server backlog=4096;`,
    '    server_name _;',
    '    add_header X-Request-Id $gateway_request_id always;',
    ...(hsts ? ['    add_header Strict-Transport-Security $gateway_hsts always;'] : []),
    '    # Before any location is chosen, on the server level, where a rewrite (not an error_page, whose',
    '    # internal redirect would run this again) hands the request to the problem that answers it.',
    '    if ($gateway_path_refused) {',
    `      rewrite ^ ${REFUSED_PATH_PROBLEM}? last;`,
    '    }',
    '',
    ...Object.keys(PROBLEMS).map((status) => `    error_page ${status}${status === '502' ? ' =' : ''} ${problemPath(Number(status))};`),
    `    error_page ${NGINX_HEADER_TOO_LARGE} =431 ${problemPath(431)};`,
    '',
    '    location = /health/live {',
    '      default_type application/json;',
    ...ownHeaders,
    '      return 200 \'{"status":"ok"}\';',
    '    }',
    '    # nginx stops accepting on a graceful stop (SIGQUIT): a load balancer sees the refusal.',
    '    location = /health/ready {',
    '      default_type application/json;',
    ...ownHeaders,
    '      return 200 \'{"status":"ready","checks":{}}\';',
    '    }',
  );
  for (const { prefix, service } of routes) {
    for (const match of [`= ${prefix}`, `^~ ${prefix}/`]) {
      add(`    location ${match} {`, `      proxy_pass http://${upstreamName(service)};`, ...proxyNextUpstream(servers[service]), '    }');
    }
  }
  add(
    '    location / {',
    '      return 404;',
    '    }',
    '',
    '    # The gateway\'s own answers. `=` lets 502 become 503 when the upstream refused the connection.',
  );
  for (const status of Object.keys(PROBLEMS).map(Number)) {
    add(`    location = ${problemPath(status)} {`, '      internal;', '      default_type application/problem+json;', ...ownHeaders);
    if (status === 502) {
      add('      if ($gateway_upstream_refused) {', `        return 503 ${problemBody(503)};`, '      }');
    }
    if (status === 503 || status === 502) add('      add_header Retry-After 1 always;');
    add(`      return ${status} ${problemBody(status)};`, '    }');
  }
  add(`    location = ${REFUSED_PATH_PROBLEM} {`, '      internal;', '      default_type application/problem+json;', ...ownHeaders);
  add(`      return 400 ${problemBody(400, REFUSED_PATH_DETAIL)};`, '    }');
  add('  }');
  if (options.statusListen) {
    add(
      '',
      '  # Connection counters for the operator, on their own listener: never on the public port.',
      '  server {',
      `    listen ${options.statusListen};`,
      '    access_log off;',
      '    location = /stub_status {',
      '      stub_status;',
      '    }',
      '    location / {',
      '      return 404;',
      '    }',
      '  }',
    );
  }
  add('}', '');
  return lines.join('\n');
}

/**
 * `host:port` of each service on this machine (their ports of SERVICES, moved by `offset`). With
 * `instances` > 1, a list per service: instance i at its port + INSTANCE_PORT_STEP × (i − 1), as
 * tools/stack/start.sh --instances runs them (settings-web stays one; src/instances.ts).
 */
export function loopbackUpstreams(offset = 0, host = '127.0.0.1', instances = 1): Record<ServiceName, UpstreamServers> {
  return Object.fromEntries(
    Object.entries(SERVICES).map(([name, { port, kind }]) => {
      const count = instancesOf(kind, instances);
      const at = (instance: number) => `${host}:${instancePort(port, instance) + offset}`;
      return [name, count === 1 ? at(1) : Array.from({ length: count }, (_, i) => at(i + 1))];
    }),
  ) as Record<ServiceName, UpstreamServers>;
}

/** `name:port` of each service on a network where each has a DNS name of its own (compose, kube play). */
export function namedUpstreams(): Record<ServiceName, string> {
  return Object.fromEntries(Object.entries(SERVICES).map(([name, { port }]) => [name, `${name}:${port}`])) as Record<ServiceName, string>;
}

/** What docker-compose.yml's gateway runs: official nginx image (or its stand-in), read-only root, uid 1000. */
export function composeConfig(): string {
  return renderNginxConfig({
    upstreams: namedUpstreams(),
    listen: String(GATEWAY_PORT),
    statusListen: '127.0.0.1:9080',
    // The container's only writable place (compose's tmpfs): pid file and buffered bodies. nginx
    // creates its temporary folders but not their parent, so the tmpfs itself.
    runtimeDir: '/tmp',
    accessLog: '/dev/stdout',
    errorLog: 'stderr',
    workerProcesses: 'auto',
  });
}
