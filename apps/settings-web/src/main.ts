import { ConfigError } from '@invoicing/service-kit';
import { loadSettingsWebConfig, settingsWebEnvSpec } from './config';
import { createSettingsWebApp, startSettingsWebApp } from './settings-web-app';

/** One entry point: `serve` (default) and `env-spec` (the variables it reads, as JSON). */
async function main(argv: string[]): Promise<number> {
  const [command = 'serve'] = argv;
  switch (command) {
    case 'env-spec':
      process.stdout.write(`${JSON.stringify(settingsWebEnvSpec())}\n`);
      return 0;
    case 'serve': {
      const config = loadSettingsWebConfig();
      const app = await createSettingsWebApp({ config });
      await startSettingsWebApp(app, { port: config.PORT, host: config.HOST, shutdownGraceSeconds: config.SHUTDOWN_GRACE_SECONDS });
      return -1;
    }
    default:
      process.stderr.write(`unknown command "${command}"; use serve or env-spec\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e: unknown) => {
    if (e instanceof ConfigError) process.stderr.write(`settings-web: ${e.message}\n`);
    else process.stderr.write(`settings-web: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
