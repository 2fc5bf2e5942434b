import { getDataSourceToken } from '@nestjs/typeorm';
import { createServiceApp, pingDatabase, ServiceApp, startServiceApp } from '@invoicing/service-kit';
import { connectEventTransport } from '@invoicing/event-bus';
import type { DataSource } from 'typeorm';
import fastifyCookie from '@fastify/cookie';
import { AppModule } from './app.module';
import type { AuthConfig } from './config/config';
import { SessionStore } from './sessions/session-store';
import { ExposureService } from './secret-scanning/exposure.service';
import { registerGithubReportRoute } from './secret-scanning/github-route';

/** The endpoints that answer in RFC 6749 form (docs/api.md section 4): token, refresh, revoke, and any other path under them. */
const OAUTH_PATHS = /^\/api\/v1\/auth\//;

/** Builds the auth service (not listening yet); used by `main.ts` and by the integration tests. */
export async function createAuthApp(config: AuthConfig): Promise<ServiceApp> {
  const service = await createServiceApp(AppModule.forRoot(config), {
    service: 'auth-service',
    logLevel: config.LOG_LEVEL,
    acceptForms: true,
    trustedProxies: config.TRUSTED_PROXIES,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    // Every error keeps the format of the endpoint it hit, including errors raised before a handler
    // (bad JSON, media type, size): RFC 6749 on the token endpoints, problem+json elsewhere. One
    // edge writes both (service-kit's sendError); the code that refuses only throws (ADR 0032).
    errorForm: (request) => (OAUTH_PATHS.test(request.url) ? 'oauth' : 'problem'),
  });
  // Settings-area session and CSRF cookies.
  await service.app.register(fastifyCookie);
  // GitHub's leaked-secret reports: a raw body (the signature covers its bytes).
  await registerGithubReportRoute(service.fastify, () => service.app.get(ExposureService));
  // Kafka subscriptions (webhooks.endpoints.v1 into the audit log): started with the app, never waited for.
  connectEventTransport(service.app);
  return service;
}

export async function startAuthApp(service: ServiceApp, config: AuthConfig): Promise<void> {
  const db = service.app.get<DataSource>(getDataSourceToken());
  const sessions = service.app.get(SessionStore);
  await startServiceApp(service, {
    port: config.PORT,
    host: config.HOST,
    shutdownGraceSeconds: config.SHUTDOWN_GRACE_SECONDS,
    readiness: {
      postgres: () => pingDatabase(db),
      redis: () => sessions.ping(),
    },
  });
}
