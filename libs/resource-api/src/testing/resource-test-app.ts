import { RevocationFeed } from '@invoicing/auth-guard';
import { ALL_SCOPES, DomainObjectKind, newId, parsePublicId, toPublicId } from '@invoicing/contracts';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ReferenceResolver } from '../references/known-objects';
import { postgresOptions, runMigrations, ServiceApp } from '@invoicing/service-kit';
import { createSigner } from 'fast-jwt';
import type { AddressInfo } from 'node:net';
import { loadResourceConfig, ResourceConfig } from '../bootstrap/resource-config';
import { createResourceApp, ResourceServiceDefinition, startResourceApp } from '../bootstrap/resource-service';

export interface ResourceTestApp {
  service: ServiceApp;
  config: ResourceConfig;
  baseUrl: string;
  /** An access token signed with the (development) key ring, as the auth service would issue it. */
  token(options?: { organizationPublicId?: string; scopes?: readonly string[]; expiresIn?: number }): string;
  newOrganizationPublicId(): string;
  /** Puts another service's object into this service's read model, as its domain event would. */
  remember(kind: DomainObjectKind, organizationPublicId: string, object: Record<string, unknown> & { id: string }): Promise<void>;
  close(): Promise<void>;
}

/**
 * A resource service on an ephemeral port against the real Postgres and Kafka, migrations applied,
 * ready (revocation replay caught up) before it is returned.
 */
export async function startResourceTestApp(def: ResourceServiceDefinition, env: Record<string, string> = {}): Promise<ResourceTestApp> {
  const config = loadResourceConfig(def, { ...process.env, NODE_ENV: 'test', PORT: '0', LOG_LEVEL: 'warn', ...env });
  await runMigrations(
    postgresOptions({
      url: config.MIGRATION_DATABASE_URL,
      schema: def.schema,
      entities: def.entities,
      migrations: def.migrations,
      applicationName: `${def.name}-test-migrate`,
      poolSize: 1,
    }),
  );
  const service = await createResourceApp(def, config);
  await startResourceApp(service, config);
  const feed = service.app.get(RevocationFeed);
  const deadline = Date.now() + 30000;
  while (!feed.ready && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const port = (service.fastify.server.address() as AddressInfo).port;
  const [kid, key] = [...config.keys][0];
  const sign = createSigner({ key, algorithm: 'HS256', kid, header: { alg: 'HS256', typ: 'at+jwt' } });
  return {
    service,
    config,
    baseUrl: `http://127.0.0.1:${port}`,
    newOrganizationPublicId: () => newId('org'),
    async remember(kind, organizationPublicId, object) {
      const db = service.app.get<DataSource>(getDataSourceToken());
      await service.app.get(ReferenceResolver).remember(db, kind, parsePublicId('org', organizationPublicId)!, { object: kind, ...object });
    },
    token({ organizationPublicId, scopes = ALL_SCOPES, expiresIn = 3600 } = {}) {
      const iat = Math.floor(Date.now() / 1000);
      return sign({
        iss: config.JWT_ISSUER,
        aud: config.JWT_AUDIENCE,
        sub: newId('key'),
        client_id: 'ak_live_testtesttesttesttesttest',
        org_id: organizationPublicId ?? toPublicId('org', '00000000-0000-7000-8000-000000000000'),
        scope: scopes.join(' '),
        sid: newId('ses'),
        jti: newId('evt'),
        iat,
        exp: iat + expiresIn,
      });
    },
    async close() {
      service.state.shuttingDown = true;
      await service.app.close();
    },
  };
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
  body: Record<string, unknown>;
}

/** fetch with JSON in and out; `body` as a string is sent verbatim. */
export async function call(
  method: string,
  url: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method,
    headers,
    body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
  });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = { raw: text };
  }
  return { status: response.status, headers: response.headers, text, body };
}
