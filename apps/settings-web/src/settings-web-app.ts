import fastifyStatic from '@fastify/static';
import { createLogger, createMetrics, drainOnSignals, fastifyBaseOptions, installAccessLog, installHealthRoutes, OpsState, problemFor, ReadinessCheck } from '@invoicing/service-kit';
import Fastify, { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger as PinoLogger } from 'pino';
import type { SettingsWebConfig } from './config';
import { SECURITY_HEADERS } from './security-headers';

/** Where the page lives on the base URL; the gateway routes this prefix here without rewriting it. */
export const PAGE_PREFIX = '/settings';
/** The page's own files: stylesheet, scripts, icon. */
export const ASSETS_PREFIX = `${PAGE_PREFIX}/assets/`;

/**
 * Next to main.js in dist: the build copies `src/assets` there and compiles the page's scripts into
 * `assets/js`. Running from the source tree (unit specs) finds the HTML and CSS but no scripts.
 */
export const DEFAULT_ASSETS_ROOT = join(__dirname, 'assets');

/** Files without which the page cannot work; readiness fails when one is missing (a broken build). */
export const REQUIRED_ASSETS = ['index.html', 'styles.css', 'js/main.js'] as const;

export interface SettingsWebAppOptions {
  config: Pick<SettingsWebConfig, 'LOG_LEVEL'>;
  assetsRoot?: string;
  logger?: PinoLogger;
}

export interface SettingsWebApp {
  fastify: FastifyInstance;
  logger: PinoLogger;
  state: OpsState;
}

/**
 * A static server for the settings page. It has no API of its own: the page calls the auth
 * service's JSON endpoints on the same origin, through the gateway, with the session cookie.
 */
export async function createSettingsWebApp(options: SettingsWebAppOptions): Promise<SettingsWebApp> {
  const root = options.assetsRoot ?? DEFAULT_ASSETS_ROOT;
  const logger = options.logger ?? createLogger('settings-web', options.config.LOG_LEVEL);
  const fastify: FastifyInstance = Fastify(fastifyBaseOptions(logger as FastifyBaseLogger, { trustProxy: true }));
  const state: OpsState = { shuttingDown: false };

  // Set before routing so that 404s, errors and health answers carry them too.
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.headers({ ...SECURITY_HEADERS, 'X-Request-Id': request.id });
    done();
  });
  installAccessLog(fastify);
  createMetrics('settings-web').install(fastify);

  await fastify.register(fastifyStatic, {
    root,
    prefix: ASSETS_PREFIX,
    index: false,
    dotfiles: 'ignore',
    // The page is only ever served through the routes below, with the headers they set.
    allowedPath: (path) => path !== '/index.html',
    // File names carry no content hash, so a browser must revalidate (ETag) rather than keep a
    // stale script after a deploy.
    cacheControl: false,
    setHeaders: (reply) => {
      void reply.header('Cache-Control', 'no-cache');
    },
  });

  // One document for every view; the page's router picks the view from the path, so a reload or a
  // bookmark of /settings/api/keys/new works.
  const sendPage = async (_request: unknown, reply: FastifyReply): Promise<FastifyReply> => {
    void reply.header('Cache-Control', 'no-cache');
    return reply.sendFile('index.html', root, { cacheControl: false });
  };
  fastify.get(PAGE_PREFIX, sendPage);
  fastify.get(`${PAGE_PREFIX}/`, sendPage);
  fastify.get(`${PAGE_PREFIX}/*`, sendPage);

  fastify.setNotFoundHandler((request, reply) => {
    const problem = { ...problemFor(404, 'No such resource.'), request_id: String(request.id) };
    void reply.status(404).type('application/problem+json').send(problem);
  });
  fastify.setErrorHandler((error, request, reply) => {
    const code = (error as { statusCode?: unknown } | null)?.statusCode;
    const status = typeof code === 'number' && code >= 400 && code < 600 ? code : 500;
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    const detail = status >= 500 ? 'An unexpected error occurred. Quote the request_id when you report it.' : 'The request was rejected.';
    void reply
      .status(status)
      .type('application/problem+json')
      .send({ ...problemFor(status, detail), request_id: String(request.id) });
  });

  const assetsPresent: ReadinessCheck = () => REQUIRED_ASSETS.every((file) => existsSync(join(root, file)));
  installHealthRoutes(fastify, { assets: assetsPresent }, state);
  return { fastify, logger, state };
}

export interface StartSettingsWebOptions {
  port: number;
  host: string;
  shutdownGraceSeconds: number;
}

/**
 * Listens, and drains on SIGTERM/SIGINT: readiness turns 503 first so the load balancer stops
 * routing here, in-flight requests finish, then the process exits (forced after the grace period).
 */
export async function startSettingsWebApp(app: SettingsWebApp, options: StartSettingsWebOptions): Promise<void> {
  await app.fastify.listen({ port: options.port, host: options.host });
  drainOnSignals({
    state: app.state,
    logger: app.logger,
    close: () => app.fastify.close(),
    graceSeconds: options.shutdownGraceSeconds,
  });
}
