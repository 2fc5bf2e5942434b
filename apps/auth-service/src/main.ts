import 'reflect-metadata';
import { ConfigError, runMigrations } from '@invoicing/service-kit';
import { createAuthApp, startAuthApp } from './auth-app';
import { createKeyCommand } from './cli/create-key.command';
import { authEnvSpec, loadAuthConfig } from './config';
import { authDataSourceOptions } from './database/data-source';

/**
 * One entry point: `serve` (default), `migrate` (run by the Kubernetes migration Job with the
 * schema owner's role), `create-key`, and `env-spec` (the variables it reads, as JSON).
 */
async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  if (command === 'env-spec') {
    process.stdout.write(`${JSON.stringify(authEnvSpec())}\n`);
    return 0;
  }
  const config = loadAuthConfig();
  switch (command) {
    case 'serve': {
      const service = await createAuthApp(config);
      await startAuthApp(service, config);
      return -1;
    }
    case 'migrate': {
      const applied = await runMigrations(authDataSourceOptions(config.MIGRATION_DATABASE_URL, 1));
      process.stdout.write(`${JSON.stringify({ service: 'auth-service', migrations_applied: applied })}\n`);
      return 0;
    }
    case 'create-key':
      return createKeyCommand(config, rest);
    default:
      process.stderr.write(`unknown command "${command}"; use serve, migrate or create-key\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e: unknown) => {
    if (e instanceof ConfigError) process.stderr.write(`auth-service: ${e.message}\n`);
    else process.stderr.write(`auth-service: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
