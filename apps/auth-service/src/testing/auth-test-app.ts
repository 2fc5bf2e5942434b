import { runMigrations, ServiceApp } from '@invoicing/service-kit';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { ApiKeysService } from '../keys/api-keys.service';
import { createAuthApp, startAuthApp } from '../auth-app';
import { Clock } from '../common/clock';
import { AuthConfig, loadAuthConfig } from '../config/config';
import { authDataSourceOptions } from '../database/data-source';

export interface AuthTestApp {
  service: ServiceApp;
  config: AuthConfig;
  baseUrl: string;
  clock: { offsetMs: number };
  createKey(scopes?: string[]): Promise<{ id: string; clientId: string; clientSecret: string; organizationPublicId: string }>;
  close(): Promise<void>;
}

/**
 * The real auth service on an ephemeral port, against the real Postgres, Redis and Kafka, with its
 * own Redis key prefix so test files do not see each other's sessions. `clock.offsetMs` moves time.
 */
export async function startAuthTestApp(env: Record<string, string> = {}): Promise<AuthTestApp> {
  const config = loadAuthConfig({
    ...process.env,
    NODE_ENV: 'test',
    PORT: '0',
    LOG_LEVEL: 'warn',
    REDIS_KEY_PREFIX: `test:${randomUUID().slice(0, 8)}:`,
    ...env,
  });
  await runMigrations(authDataSourceOptions(config.MIGRATION_DATABASE_URL, 1));
  const service = await createAuthApp(config);
  const clock = { offsetMs: 0 };
  const systemClock = service.app.get(Clock);
  const realNow = systemClock.now.bind(systemClock);
  jest.spyOn(systemClock, 'now').mockImplementation(() => realNow() + clock.offsetMs);
  await startAuthApp(service, config);
  const address = service.fastify.server.address() as AddressInfo;
  const keys = service.app.get(ApiKeysService);
  return {
    service,
    config,
    baseUrl: `http://127.0.0.1:${address.port}`,
    clock,
    async createKey(scopes = ['read:invoices', 'write:invoices', 'read:clients']) {
      const org = await keys.createOrganization(`Test org ${randomUUID().slice(0, 6)}`);
      const { key, clientSecret } = await keys.createKey(org.id, 'test key', scopes);
      return { id: key.id, clientId: key.client_id, clientSecret, organizationPublicId: key.organization_id };
    },
    async close() {
      service.state.shuttingDown = true;
      // Fastify's close waits for every open connection but idle ones. A request refused by its
      // Content-Length (a 413) whose client stopped uploading stays open, not idle, until the
      // client drops it (seen: over 60 s on a loaded machine). The service's own SIGTERM path
      // bounds this with its grace period; here, two seconds, then every connection is closed.
      const force = setTimeout(() => service.fastify.server.closeAllConnections(), 2000);
      try {
        await service.app.close();
      } finally {
        clearTimeout(force);
      }
    },
  };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = { raw: text };
  }
  return { status: response.status, headers: response.headers, body: json };
}

export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [h, p] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>,
  };
}
