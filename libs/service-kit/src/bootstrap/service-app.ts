import { DynamicModule, Logger, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyInstance } from 'fastify';
import type { Logger as PinoLogger } from 'pino';
import { installHealthRoutes, OpsState, ReadinessCheck } from '../health/ops-routes';
import { drainOnSignals } from './drain-on-signals';
import { refuseAmbiguousPaths } from '../http/ambiguous-path';
import { fastifyBaseOptions } from '../http/fastify-base';
import { ProblemException } from '../http/problem';
import { ErrorFilter, ErrorFormOf, JSON_ONLY, PROBLEM_FORM_ONLY, sendError } from '../http/error-edge';
import { DEFAULT_REQUEST_TIMEOUT_MS, installRequestDeadline } from '../http/request-deadline';
import { createLogger, installAccessLog, lazyChildLoggerFactory, NestPinoLogger } from '../observability/logger';
import { createMetrics } from '../observability/metrics';
import { traceRequests } from '../tracing';

/** Request bodies above this are refused with 413 (docs/api.md section 8). */
export const BODY_LIMIT_BYTES = 1024 * 1024;
/**
 * Refused bodies up to this declared size are read and discarded, so that a caller still uploading
 * (a proxy, the gateway) reads the 413 instead of a reset (see below); larger ones close the connection.
 */
export const DRAIN_REJECTED_BODY_MAX_BYTES = 16 * 1024 * 1024;

export interface ServiceAppOptions {
  /** Service name: logs, metrics labels. */
  service: string;
  logLevel: string;
  /**
   * Resource services accept JSON only (415 otherwise); the auth service also takes
   * `application/x-www-form-urlencoded` for standard OAuth 2.0 clients.
   */
  acceptForms?: boolean;
  /**
   * The form every error of a request is written in, whether raised in a handler or by Fastify
   * before one (body parsing, limits): problem+json by default; the auth service answers RFC 6749 on
   * its token endpoints (ADR 0006, ADR 0032).
   */
  errorForm?: ErrorFormOf;
  /**
   * Addresses or CIDR blocks of the proxies whose X-Forwarded-For is believed (TRUSTED_PROXIES);
   * none by default: the client is the socket's peer.
   */
  trustedProxies?: readonly string[];
  /** Every request is answered within this (REQUEST_TIMEOUT_MS); 503 past it. */
  requestTimeoutMs?: number;
}

export interface ServiceApp {
  app: NestFastifyApplication;
  fastify: FastifyInstance;
  logger: PinoLogger;
  state: OpsState;
}

/**
 * The one skeleton every service boots from: Fastify adapter, JSON logs with the request id,
 * problem+json errors everywhere (including Fastify's own), X-Request-Id on every response,
 * Prometheus metrics. Call {@link startServiceApp} once the readiness checks can be resolved.
 */
export async function createServiceApp(module: Type<unknown> | DynamicModule, options: ServiceAppOptions): Promise<ServiceApp> {
  const logger = createLogger(options.service, options.logLevel);
  const adapter = new FastifyAdapter({
    // Behind the gateway: the client address used for throttling comes from X-Forwarded-For, when
    // the gateway (a trusted proxy) set it; anyone else's header is ignored.
    ...fastifyBaseOptions(logger, { trustProxy: options.trustedProxies ?? [] }),
    bodyLimit: BODY_LIMIT_BYTES,
    // request.log is made on first use: the access line does not need it (installAccessLog).
    childLoggerFactory: lazyChildLoggerFactory,
  });
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, {
    logger: new NestPinoLogger(logger),
    abortOnError: false,
  });
  const nestLogger = new Logger('http');
  const formOf = options.errorForm ?? PROBLEM_FORM_ONLY;
  app.useGlobalFilters(new ErrorFilter(formOf));
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  traceRequests(fastify);
  fastify.addHook('onRequest', refuseAmbiguousPaths);
  // Fastify-level routes registered as plugins before Nest's init (the GitHub report receiver, with
  // a parser of its own) keep this handler: a plugin's scope copies its parent's at registration.
  // Nest then sets its own on the root at init, for its routes (through ErrorFilter, the same words).
  // Fastify 5.12 warns of that second call once at start-up (FSTWRN004); both are meant.
  fastify.setErrorHandler((error, request, reply) => sendError(error, request, reply, nestLogger, formOf(request)));
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('X-Request-Id', request.id);
    done();
  });
  installAccessLog(fastify);
  installRequestDeadline(fastify, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, nestLogger, formOf);
  if (!options.acceptForms) {
    fastify.addHook('preHandler', (request, _reply, done) => {
      const type = request.headers['content-type'];
      if (type && request.body !== undefined && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
        done(new ProblemException(415, JSON_ONLY));
        return;
      }
      done();
    });
  }
  // Fastify closes the connection after refusing a body by its Content-Length. A proxy still
  // uploading (the gateway, an Ingress) then sees a reset instead of the 413. For bodies of a sane
  // size, let Node drain the rest so the caller reads the 413; huge ones still get the close.
  // A callback hook, not an async one: it runs on every response and a promise each showed up.
  // (Nest replaces Fastify's error handler at start-up, so the 413 cannot be caught there instead;
  // the hook itself measured ~0.1 % of a request.)
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode === 413 && Number(request.headers['content-length'] ?? NaN) <= DRAIN_REJECTED_BODY_MAX_BYTES) {
      reply.removeHeader('connection');
    }
    done(null, payload);
  });
  createMetrics(options.service).install(fastify);
  return { app, fastify, logger, state: { shuttingDown: false } };
}

export interface StartOptions {
  port: number;
  host: string;
  readiness: Record<string, ReadinessCheck>;
  shutdownGraceSeconds: number;
}

/**
 * Adds the health routes, starts the transports connected to the app (a resource service's Kafka
 * subscriptions: event-bus `connectEventTransport`), listens, and drains on SIGTERM/SIGINT:
 * readiness turns 503 first so the load balancer stops routing, in-flight requests finish, then
 * providers close (Kafka, Redis, pools).
 */
export async function startServiceApp(service: ServiceApp, options: StartOptions): Promise<void> {
  installHealthRoutes(service.fastify, options.readiness, service.state);
  // After init, so that no message reaches a handler before every provider has bootstrapped; a
  // transport does not wait for its broker here (readiness says when it is there).
  await service.app.init();
  await service.app.startAllMicroservices();
  await service.app.listen(options.port, options.host);
  drainOnSignals({
    state: service.state,
    logger: service.logger,
    close: () => service.app.close(),
    graceSeconds: options.shutdownGraceSeconds,
  });
}
