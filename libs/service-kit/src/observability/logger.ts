import type { LoggerService } from '@nestjs/common';
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify';
import pino, { Logger as PinoLogger } from 'pino';
import { isOpsPath } from '../health/ops-routes';
import { traceLogMixin } from '../tracing';

/**
 * Lines are written in batches of at least this many bytes (~20 access lines), and whatever is
 * pending at least every {@link LOG_FLUSH_INTERVAL_MS}. pino flushes what is pending synchronously
 * when the process exits (also on an uncaught exception); a SIGKILL loses the last batch.
 */
const LOG_BATCH_BYTES = 4096;
const LOG_FLUSH_INTERVAL_MS = 250;

/** The same `"time"` field as `pino.stdTimeFunctions.isoTime`, formatted once per millisecond. */
let lastTimeMs = -1;
let lastTimeField = '';
function isoTime(): string {
  const now = Date.now();
  if (now !== lastTimeMs) {
    lastTimeMs = now;
    lastTimeField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTimeField;
}

/** Per process logger → its access-line logger (same destination, same fields, no redaction). */
const accessLoggers = new WeakMap<object, PinoLogger>();

/**
 * One JSON logger per process, shared by Fastify (request logs carry `reqId`, the X-Request-Id) and
 * Nest. Credentials never reach a log line: the headers and body fields that carry them are redacted.
 */
export function createLogger(service: string, level: string): PinoLogger {
  // Asynchronous, batched writes: one write(2) carries many lines instead of one each. Synchronous
  // writes were ~10 % of a request, and one asynchronous write per line still ~10 % of a 401
  // (`writeString`, the thread-pool hand-off per write) in the profiles, docs/perf.md.
  const destination = pino.destination({ dest: 1, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_INTERVAL_MS });
  // With tracing on, a line written while a span is active names it (`trace_id`, `span_id`: the
  // access line and a handler's lines lead to the request's trace). Off, pino has no mixin to call.
  const mixin = traceLogMixin();
  const common = { level, base: { service }, timestamp: isoTime, ...(mixin ? { mixin } : {}) };
  const logger = pino(
    {
      ...common,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'res.headers["set-cookie"]',
          '*.client_secret',
          '*.refresh_token',
          '*.access_token',
          '*.password',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
  // The access line is five flat fields of our own (no headers, no bodies): nothing for redaction to
  // find, and pino's redaction copies every object it is given (3-5 % of a 401 in the profile).
  accessLoggers.set(logger, pino(common, destination));
  return logger;
}

/**
 * One access-log line per request, at completion, carrying what Fastify's two default lines did
 * (method, URL, status, duration and the request id). Use with `disableRequestLogging: true`: it
 * halves the logging cost of every request.
 */
export function installAccessLog(fastify: FastifyInstance): void {
  const access = accessLoggerOf(fastify.log);
  fastify.addHook('onResponse', (request, reply, done) => {
    if (!isOpsPath(request.url)) {
      const fields = { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 };
      if (access) {
        // Written through the process logger rather than the request's child logger: the same line
        // (`request_id` comes right after the base fields either way), and the per-request child
        // need not exist (lazyChildLoggerFactory).
        access.info({ request_id: request.id, ...fields }, 'request completed');
      } else {
        request.log.info(fields, 'request completed');
      }
    }
    done();
  });
}

/** Fastify's logger is a child of the one createLogger made (prototype chain); found at start-up. */
function accessLoggerOf(logger: object): PinoLogger | undefined {
  for (let l: object | null = logger; l !== null; l = Object.getPrototypeOf(l) as object | null) {
    const access = accessLoggers.get(l);
    if (access) return access;
  }
  return undefined;
}

type ChildLoggerFactory = NonNullable<FastifyServerOptions['childLoggerFactory']>;
type AnyLogFn = (...args: unknown[]) => void;

/**
 * `request.log`, made when something logs through it. Fastify otherwise builds a pino child logger
 * (with options, pino's slow path) for every request, although the access line no longer goes
 * through it (installAccessLog) and little else does: Fastify's own warnings, handlers' rare error
 * lines. When one does, the child is made then, with the same bindings, so its line is unchanged.
 */
class LazyChildLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: pino.Bindings,
    private readonly options: pino.ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.logger.level;
  }
  set level(level: string) {
    this.logger.level = level;
  }

  fatal(...args: unknown[]): void {
    (this.logger.fatal as AnyLogFn)(...args);
  }
  error(...args: unknown[]): void {
    (this.logger.error as AnyLogFn)(...args);
  }
  warn(...args: unknown[]): void {
    (this.logger.warn as AnyLogFn)(...args);
  }
  info(...args: unknown[]): void {
    (this.logger.info as AnyLogFn)(...args);
  }
  debug(...args: unknown[]): void {
    (this.logger.debug as AnyLogFn)(...args);
  }
  trace(...args: unknown[]): void {
    (this.logger.trace as AnyLogFn)(...args);
  }
  silent(): void {
    // Level 'silent' logs nothing, as pino's own silent() does.
  }

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify `childLoggerFactory`: request loggers made on first use (see LazyChildLogger). */
export const lazyChildLoggerFactory: ChildLoggerFactory = (logger, bindings, options) =>
  new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;

/** Nest's LoggerService on top of the process logger. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: PinoLogger) {}

  log(message: unknown, context?: string): void {
    this.write('info', message, context);
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.write('error', message, context, trace);
  }
  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.write('trace', message, context);
  }
  fatal(message: unknown, context?: string): void {
    this.write('fatal', message, context);
  }

  private write(level: pino.Level, message: unknown, context?: string, trace?: string): void {
    const fields: Record<string, unknown> = { context };
    if (trace) fields.stack = trace;
    if (message !== null && typeof message === 'object') this.logger[level]({ ...fields, ...message });
    else this.logger[level](fields, String(message));
  }
}
