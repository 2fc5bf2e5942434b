import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import pino, { Logger as PinoLogger } from 'pino';

/**
 * One JSON logger per process, shared by Fastify (request logs carry `reqId`, the X-Request-Id) and
 * Nest. Credentials never reach a log line: the headers and body fields that carry them are redacted.
 */
export function createLogger(service: string, level: string): PinoLogger {
  return pino(
    {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
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
    // Asynchronous, coalescing writes: under load, one write(2) carries many lines instead of one
    // each (synchronous writes were ~10 % of a request in the profiles, docs/perf.md). pino flushes
    // what is pending synchronously when the process exits.
    pino.destination({ dest: 1, sync: false }),
  );
}

/** Health probes and scrapes arrive every few seconds; an access line each would drown the rest. */
const UNLOGGED = (url: string) => url.startsWith('/health/') || url === '/metrics';

/**
 * One access-log line per request, at completion, carrying what Fastify's two default lines did
 * (method, URL, status, duration; the request id comes from the request's child logger). Use with
 * `disableRequestLogging: true`: it halves the logging cost of every request.
 */
export function installAccessLog(fastify: FastifyInstance): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    if (!UNLOGGED(request.url)) {
      request.log.info(
        { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
        'request completed',
      );
    }
    done();
  });
}

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
