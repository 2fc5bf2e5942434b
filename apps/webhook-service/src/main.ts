// First: starts tracing (when OTEL_EXPORTER_OTLP_ENDPOINT is set) before any instrumented module loads.
import './tracing';
import 'reflect-metadata';
import { postgresOptions, printJson, runCli, runMigrations, SERVING } from '@invoicing/service-kit';
import { createWebhookApp, MIGRATIONS, SCHEMA, SERVICE_NAME, startWebhookApp } from './app';
import { loadWebhookConfig, webhookEnvSpec } from './config';

runCli(SERVICE_NAME, {
  serve: async () => {
    const config = loadWebhookConfig();
    await startWebhookApp(await createWebhookApp(config), config);
    return SERVING;
  },
  migrate: async () => {
    const config = loadWebhookConfig();
    const applied = await runMigrations(
      postgresOptions({ url: config.MIGRATION_DATABASE_URL, schema: SCHEMA, entities: [], migrations: MIGRATIONS, applicationName: `${SERVICE_NAME}-migrate`, poolSize: 1 }),
    );
    return printJson({ service: SERVICE_NAME, migrations_applied: applied });
  },
  'env-spec': () => printJson(webhookEnvSpec()),
});
