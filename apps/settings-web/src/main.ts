import { printJson, runCli, SERVING } from '@invoicing/service-kit';
import { loadSettingsWebConfig, settingsWebEnvSpec } from './config';
import { createSettingsWebApp, startSettingsWebApp } from './settings-web-app';

/** One entry point: `serve` (default) and `env-spec` (the variables it reads, as JSON). */
runCli('settings-web', {
  serve: async () => {
    const config = loadSettingsWebConfig();
    const app = await createSettingsWebApp({ config });
    await startSettingsWebApp(app, { port: config.PORT, host: config.HOST, shutdownGraceSeconds: config.SHUTDOWN_GRACE_SECONDS });
    return SERVING;
  },
  'env-spec': () => printJson(settingsWebEnvSpec()),
});
