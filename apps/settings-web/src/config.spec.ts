import { ConfigError } from '@invoicing/service-kit';
import { loadSettingsWebConfig, settingsWebEnvSpec } from './config';

describe('settings-web configuration', () => {
  it('listens on the platform table port (3010) on loopback by default', () => {
    expect(loadSettingsWebConfig({})).toMatchObject({ PORT: 3010, HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'development' });
  });

  it('stops with a message that names the bad variable', () => {
    expect(() => loadSettingsWebConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadSettingsWebConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  });

  it('lists its variables for the env-spec command, none of them secret', () => {
    const spec = settingsWebEnvSpec();
    expect(spec.map((v) => v.name).sort()).toEqual(['HOST', 'LOG_LEVEL', 'NODE_ENV', 'PORT', 'SHUTDOWN_GRACE_SECONDS']);
    expect(spec.every((v) => !v.secret && !v.required)).toBe(true);
  });
});
