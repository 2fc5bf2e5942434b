import { SERVICES } from '@invoicing/contracts';
import { baseEnvSchema, describeEnv, EnvVariableSpec, loadConfig } from '@invoicing/service-kit';
import { z } from 'zod';

/**
 * The page holds no secrets and calls the API on its own origin (the gateway routes both), so the
 * only settings are where to listen and how to log.
 */
const schema = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(SERVICES['settings-web'].port),
});

export type SettingsWebConfig = z.infer<typeof schema>;

export function loadSettingsWebConfig(env: NodeJS.ProcessEnv = process.env): SettingsWebConfig {
  return loadConfig(schema, env);
}

/** Variables read by settings-web (the `env-spec` command prints this). */
export function settingsWebEnvSpec(): EnvVariableSpec[] {
  return describeEnv(schema, []);
}
