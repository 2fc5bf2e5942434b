import { GATEWAY_PORT, SERVICES, ServiceName, serviceUrlVariable } from '@invoicing/contracts';
import { ConfigError } from '@invoicing/service-kit';
import { gatewayEnvSpec, loadGatewayConfig } from './config';

const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];

describe(loadGatewayConfig.name, () => {
  it('defaults every upstream to the service port of the platform table on loopback', () => {
    const config = loadGatewayConfig({});
    expect(config.PORT).toBe(GATEWAY_PORT);
    for (const name of SERVICE_NAMES) expect(config.upstreams[name]).toBe(`http://127.0.0.1:${SERVICES[name].port}`);
  });

  it('takes each upstream from its <SERVICE>_URL variable and drops a trailing slash', () => {
    const config = loadGatewayConfig({ AUTH_SERVICE_URL: 'http://auth-service:3001/', INVOICE_SERVICE_URL: 'https://inv.internal:8443' });
    expect(config.upstreams['auth-service']).toBe('http://auth-service:3001');
    expect(config.upstreams['invoice-service']).toBe('https://inv.internal:8443');
  });

  it('refuses an upstream that is not an http origin, naming the variable', () => {
    for (const bad of ['auth-service:3001', 'bogus', 'ftp://auth:21', 'http://auth:3001/api']) {
      expect(() => loadGatewayConfig({ AUTH_SERVICE_URL: bad })).toThrow(ConfigError);
      expect(() => loadGatewayConfig({ AUTH_SERVICE_URL: bad })).toThrow(/AUTH_SERVICE_URL/);
    }
  });

  it('refuses a timeout below 100 ms', () => {
    expect(() => loadGatewayConfig({ UPSTREAM_TIMEOUT_MS: '5' })).toThrow(/UPSTREAM_TIMEOUT_MS/);
  });
});

describe(serviceUrlVariable.name, () => {
  it('derives the variable name from the service name', () => {
    expect(serviceUrlVariable('auth-service')).toBe('AUTH_SERVICE_URL');
    expect(serviceUrlVariable('settings-web')).toBe('SETTINGS_WEB_URL');
  });
});

describe(gatewayEnvSpec.name, () => {
  it('lists one upstream variable per service, none of them secret or required', () => {
    const spec = gatewayEnvSpec();
    const names = spec.map((v) => v.name);
    for (const name of SERVICE_NAMES) expect(names).toContain(serviceUrlVariable(name));
    expect(names).toEqual(expect.arrayContaining(['PORT', 'HOST', 'LOG_LEVEL', 'UPSTREAM_TIMEOUT_MS', 'SHUTDOWN_GRACE_SECONDS']));
    expect(spec.filter((v) => v.secret || v.required)).toEqual([]);
  });
});
