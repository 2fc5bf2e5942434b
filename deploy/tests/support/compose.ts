import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from './platform';

export interface ComposeService {
  image?: string;
  build?: { context: string; args?: Record<string, string> };
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] | string };
  ports?: string[];
  restart?: string;
  read_only?: boolean;
  cap_drop?: string[];
  user?: string;
  init?: boolean;
  tmpfs?: string[] | string;
  security_opt?: string[];
  stop_signal?: string;
  volumes?: string[];
}

export interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

export const COMPOSE_PATH = join(ROOT, 'docker-compose.yml');

/** docker-compose.yml as Compose reads it: YAML merge keys (`<<: *anchor`) applied. */
export function loadCompose(): ComposeFile {
  return parse(readFileSync(COMPOSE_PATH, 'utf8'), { merge: true }) as ComposeFile;
}

/** The app a compose service runs, from its image build argument APP. */
export function appOf(service: ComposeService): string | undefined {
  return service.build?.args?.APP;
}

export function environmentOf(service: ComposeService): Record<string, string> {
  return Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, String(v)]));
}

/** Whether the service runs `migrate` (its one-shot form) rather than `serve`. */
export function isMigration(service: ComposeService): boolean {
  const command = Array.isArray(service.command) ? service.command : service.command ? [service.command] : [];
  return command[0] === 'migrate';
}
