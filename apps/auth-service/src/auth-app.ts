import { Logger } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createServiceApp, pingDatabase, sendProblem, ServiceApp, startServiceApp } from '@invoicing/service-kit';
import type { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import type { AuthConfig } from './config';
import { SessionStore } from './sessions/session-store';
import { sendOAuthError } from './token/oauth-error.filter';

const OAUTH_PATHS = /^\/api\/v1\/auth\//;

/** Builds the auth service (not listening yet); used by `main.ts` and by the integration tests. */
export async function createAuthApp(config: AuthConfig): Promise<ServiceApp> {
  const service = await createServiceApp(AppModule.forRoot(config), {
    service: 'auth-service',
    logLevel: config.LOG_LEVEL,
    acceptForms: true,
  });
  // Errors raised by Fastify before a handler (bad JSON, media type, size) keep the format of the
  // endpoint they hit: RFC 6749 on the token endpoints, problem+json elsewhere.
  const logger = new Logger('http');
  service.fastify.setErrorHandler((error, request, reply) =>
    OAUTH_PATHS.test(request.url) ? sendOAuthError(error, request, reply, logger) : sendProblem(error, request, reply, logger),
  );
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
