import { z } from 'zod';
import { baseEnvSchema, ConfigError, isPlaceholderSecret, loadConfig, requireRealSecretsInProduction, tracingEnvShape } from './env';
import { describeEnv } from './env-spec';

const schema = baseEnvSchema
  .extend({ PORT: z.coerce.number().int().default(3000), DATABASE_URL: z.string().default('postgres://a_app:a_app_dev@h/db') })
  .superRefine((env, ctx) => requireRealSecretsInProduction(env, { DATABASE_URL: env.DATABASE_URL }, ctx));

describe(loadConfig.name, () => {
  it('applies development defaults', () => {
    expect(loadConfig(schema, {})).toMatchObject({ NODE_ENV: 'development', PORT: 3000 });
  });

  function messageOf(env: NodeJS.ProcessEnv): string {
    try {
      loadConfig(schema, env);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as ConfigError).message;
    }
    throw new Error('expected a ConfigError');
  }

  it('reports bad variables by name', () => {
    expect(messageOf({ PORT: 'eighty', LOG_LEVEL: 'loud' })).toMatch(/PORT[\s\S]*LOG_LEVEL|LOG_LEVEL[\s\S]*PORT/);
  });

  it('names a placeholder secret without printing it', () => {
    const message = messageOf({ NODE_ENV: 'production', DATABASE_URL: 'postgres://u:changeme@h/db' });
    expect(message).toContain('DATABASE_URL: holds a placeholder value');
    expect(message).not.toContain('changeme');
  });

  it('refuses the development defaults in production', () => {
    expect(() => loadConfig(schema, { NODE_ENV: 'production' })).toThrow(/DATABASE_URL/);
    expect(loadConfig(schema, { NODE_ENV: 'production', DATABASE_URL: 'postgres://a:Kx9vQ2@h/db' }).PORT).toBe(3000);
  });
});

describe(isPlaceholderSecret.name, () => {
  it('recognises the usual placeholders', () => {
    for (const v of ['changeme', 'CHANGE_ME', 'dev-only', 'placeholder', 'xxxx', 'auth_app_dev']) expect(isPlaceholderSecret(v)).toBe(true);
    expect(isPlaceholderSecret('q8Zr2NbL0w')).toBe(false);
  });
});

describe('tracingEnvShape', () => {
  const traced = baseEnvSchema.extend(tracingEnvShape);

  it('is optional, an empty value counting as unset, and env-spec lists it so', () => {
    expect(loadConfig(traced, { OTEL_EXPORTER_OTLP_ENDPOINT: '' }).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(loadConfig(traced, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'inv' })).toMatchObject({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: 'inv',
    });
    expect(describeEnv(traced, []).filter((v) => v.name.startsWith('OTEL_'))).toEqual([
      { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', required: false, secret: false },
      { name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', required: false, secret: false },
      { name: 'OTEL_SERVICE_NAME', required: false, secret: false },
    ]);
  });

  it('refuses an endpoint that is not an http(s) URL, by name', () => {
    expect(() => loadConfig(traced, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadConfig(traced, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://collector:4317' })).toThrow(/OTEL_EXPORTER_OTLP_TRACES_ENDPOINT/);
  });
});
