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

  it('serves metrics beside the public port by default (PORT + 1000), on METRICS_PORT when set, nowhere when 0', () => {
    expect(loadGatewayConfig({}).METRICS_PORT).toBe(GATEWAY_PORT + 1000);
    expect(loadGatewayConfig({ PORT: '28080' }).METRICS_PORT).toBe(29080);
    expect(loadGatewayConfig({ METRICS_PORT: '9464' }).METRICS_PORT).toBe(9464);
    expect(loadGatewayConfig({ METRICS_PORT: '0' }).METRICS_PORT).toBe(0);
    // Beside an ephemeral public port, no default one.
    expect(loadGatewayConfig({ PORT: '0' }).METRICS_PORT).toBe(0);
  });

  it('refuses a metrics port that is the public one, or no port at all', () => {
    expect(() => loadGatewayConfig({ PORT: '8080', METRICS_PORT: '8080' })).toThrow(/METRICS_PORT: must differ from PORT/);
    expect(() => loadGatewayConfig({ PORT: '65000' })).toThrow(/METRICS_PORT/);
    expect(loadGatewayConfig({ PORT: '65000', METRICS_PORT: '0' }).METRICS_PORT).toBe(0);
    expect(() => loadGatewayConfig({ METRICS_PORT: '70000' })).toThrow(/METRICS_PORT/);
  });

  it('takes UPSTREAM_SOURCE_ADDRESS as an IP address, unset by default', () => {
    expect(loadGatewayConfig({}).UPSTREAM_SOURCE_ADDRESS).toBeUndefined();
    expect(loadGatewayConfig({ UPSTREAM_SOURCE_ADDRESS: '127.0.0.2' }).UPSTREAM_SOURCE_ADDRESS).toBe('127.0.0.2');
    expect(loadGatewayConfig({ UPSTREAM_SOURCE_ADDRESS: '::1' }).UPSTREAM_SOURCE_ADDRESS).toBe('::1');
    for (const bad of ['localhost', '127.0.0.2:80', '127.0.0.256', '10.0.0.0/8', '']) {
      expect(() => loadGatewayConfig({ UPSTREAM_SOURCE_ADDRESS: bad })).toThrow(/UPSTREAM_SOURCE_ADDRESS/);
    }
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
    expect(names).toEqual(
      expect.arrayContaining(['PORT', 'METRICS_PORT', 'HOST', 'LOG_LEVEL', 'UPSTREAM_TIMEOUT_MS', 'UPSTREAM_SOURCE_ADDRESS', 'SHUTDOWN_GRACE_SECONDS']),
    );
    expect(spec.filter((v) => v.secret || v.required)).toEqual([]);
  });
});
