import type { LoggerService } from '@nestjs/common';
import pino, { Logger as PinoLogger } from 'pino';

/**
 * One JSON logger per process, shared by Fastify (request logs carry `reqId`, the X-Request-Id) and
 * Nest. Credentials never reach a log line: the headers and body fields that carry them are redacted.
 */
export function createLogger(service: string, level: string): PinoLogger {
  return pino({
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
