// First: starts tracing (when OTEL_EXPORTER_OTLP_ENDPOINT is set) before any instrumented module loads.
import './tracing';
import 'reflect-metadata';
import { printJson, runCli, runMigrations, SERVING } from '@invoicing/service-kit';
import { createAuthApp, startAuthApp } from './auth-app';
import { createKeyCommand } from './create-key.command';
import { verifyAuditCommand } from './audit/verify-audit.command';
import { authEnvSpec, loadAuthConfig } from './config/config';
import { authDataSourceOptions } from './database/data-source';

/**
 * One entry point: `serve` (default), `migrate` (run by the Kubernetes migration Job with the
 * schema owner's role), `create-key`, `verify-audit` (an organization's audit chain), and
 * `env-spec` (the variables it reads, as JSON).
 */
runCli('auth-service', {
  serve: async () => {
    const config = loadAuthConfig();
    await startAuthApp(await createAuthApp(config), config);
    return SERVING;
  },
  migrate: async () => {
    const applied = await runMigrations(authDataSourceOptions(loadAuthConfig().MIGRATION_DATABASE_URL, 1));
    return printJson({ service: 'auth-service', migrations_applied: applied });
  },
  'create-key': (args) => createKeyCommand(loadAuthConfig(), args),
  'verify-audit': (args) => verifyAuditCommand(loadAuthConfig(), args),
  'env-spec': () => printJson(authEnvSpec()),
});
