import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './platform';

/** The nginx configuration docker-compose.yml mounts into the gateway, as committed. */
export const COMPOSE_GATEWAY_CONF = 'deploy/compose/gateway.nginx.conf';

export function committedComposeConfig(): string {
  return readFileSync(join(ROOT, COMPOSE_GATEWAY_CONF), 'utf8');
}

/**
 * A fresh render of compose's configuration, by the very command the file is made with
 * (`cli.ts compose`, which prints libs/gateway's composeConfig()).
 */
export function freshComposeConfig(): string {
  return runGatewayCli(['compose']);
}

/** `tsx libs/gateway/src/cli.ts ARGS...`: its standard output. */
export function runGatewayCli(args: string[]): string {
  return execFileSync(join(ROOT, 'node_modules/.bin/tsx'), ['--tsconfig', 'libs/gateway/tsconfig.spec.json', 'libs/gateway/src/cli.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** What a rendered nginx.conf routes: each upstream block's one server, each prefix's upstream. */
export interface NginxRouting {
  /** upstream block name → `host:port` of its server. */
  upstreams: Record<string, string>;
  /** `= /p` and `^~ /p/` locations that proxy: the prefix (without the trailing slash) and the upstream block. */
  locations: { match: '=' | '^~'; prefix: string; upstream: string }[];
  /** The address of each `listen` directive, in order. */
  listens: string[];
}

export function parseNginxRouting(conf: string): NginxRouting {
  const upstreams: Record<string, string> = {};
  const locations: NginxRouting['locations'] = [];
  const listens: string[] = [];
  let upstream: string | undefined;
  let location: { match: '=' | '^~'; prefix: string } | undefined;
  for (const raw of conf.split('\n')) {
    const line = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = /^upstream (\S+) \{$/.exec(line))) upstream = m[1];
    else if (upstream && (m = /^server (\S+)[ ;]/.exec(line))) {
      if (upstreams[upstream]) throw new Error(`upstream ${upstream} has more than one server`);
      upstreams[upstream] = m[1];
    } else if ((m = /^location (=|\^~) (\S+) \{$/.exec(line))) location = { match: m[1] as '=' | '^~', prefix: m[2].replace(/\/$/, '') };
    else if (/^location /.test(line)) location = undefined;
    else if (location && (m = /^proxy_pass http:\/\/([A-Za-z0-9_]+);$/.exec(line))) locations.push({ ...location, upstream: m[1] });
    else if ((m = /^listen ([^\s;]+)/.exec(line))) listens.push(m[1]);
    if (line === '}') upstream = undefined;
  }
  return { upstreams, locations, listens };
}

/** prefix → `host:port` of its upstream, checking that `= /p` and `^~ /p/` agree for every prefix. */
export function routedPrefixes(routing: NginxRouting): { prefix: string; server: string }[] {
  const byPrefix = new Map<string, Set<string>>();
  const matches = new Map<string, Set<string>>();
  for (const { match, prefix, upstream } of routing.locations) {
    const server = routing.upstreams[upstream];
    if (!server) throw new Error(`location ${match} ${prefix} proxies to ${upstream}, which is no upstream block`);
    byPrefix.set(prefix, (byPrefix.get(prefix) ?? new Set()).add(server));
    matches.set(prefix, (matches.get(prefix) ?? new Set()).add(match));
  }
  return [...byPrefix].map(([prefix, servers]) => {
    if (servers.size !== 1 || matches.get(prefix)?.size !== 2) {
      throw new Error(`prefix ${prefix}: expected "= ${prefix}" and "^~ ${prefix}/" to one upstream, got ${[...servers].join(', ')}`);
    }
    return { prefix, server: [...servers][0] };
  });
}
