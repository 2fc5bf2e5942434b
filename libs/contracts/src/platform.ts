import { RESOURCE_MANIFEST, RESOURCES, ResourceServiceName, serviceOfResource } from './manifest';

export interface ServiceEntry {
  port: number;
  kind: 'auth' | 'resource' | 'webhook' | 'web';
}
export type ServiceName = 'auth-service' | ResourceServiceName | 'webhook-service' | 'settings-web';

/**
 * The services of the platform and the one base URL in front of them: the auth service, one service
 * per resource of the manifest, the webhook delivery service, and the settings page. The local gateway, the docker-compose stack
 * and the Kubernetes Ingress are all derived from (and tested against) this table.
 */
export const SERVICES: Readonly<Record<ServiceName, ServiceEntry>> = {
  'auth-service': { port: 3001, kind: 'auth' },
  ...(Object.fromEntries(RESOURCES.map((r) => [serviceOfResource(r), { port: RESOURCE_MANIFEST[r].port, kind: 'resource' }])) as Record<
    ResourceServiceName,
    ServiceEntry
  >),
  // Outside the resources' port range (the generator takes the next port above the last resource's).
  'webhook-service': { port: 3020, kind: 'webhook' },
  'settings-web': { port: 3010, kind: 'web' },
};

/**
 * `auth-service` → `AUTH_SERVICE_URL`: the variable naming a service's base URL wherever one process
 * calls another (the gateway's upstreams, the resource services' reference checks, test harnesses).
 */
export function serviceUrlVariable(service: ServiceName): string {
  return `${service.replace(/-/g, '_').toUpperCase()}_URL`;
}

/** Port of the gateway (the base URL) in every mode. */
export const GATEWAY_PORT = 8080;

export interface GatewayRoute {
  /** Path prefix, matched on a segment boundary. */
  prefix: string;
  service: ServiceName;
}

/** Path prefix → service. Longest prefix wins. */
export const GATEWAY_ROUTES: readonly GatewayRoute[] = [
  { prefix: '/api/v1/auth', service: 'auth-service' },
  { prefix: '/api/v1/account', service: 'auth-service' },
  { prefix: '/api/v1/settings', service: 'auth-service' },
  { prefix: '/api/v1/secret-scanning', service: 'auth-service' },
  { prefix: '/api/v1/openapi.json', service: 'auth-service' },
  { prefix: '/api/v1/asyncapi.json', service: 'auth-service' },
  // The API reference and, below it, the scripts it loads (ADR 0027).
  { prefix: '/api/v1/docs', service: 'auth-service' },
  // RFC 8414 discovery at the base URL, where OAuth client libraries look for it.
  { prefix: '/.well-known/oauth-authorization-server', service: 'auth-service' },
  ...RESOURCES.map((r) => ({ prefix: `/api/v1/${r}`, service: serviceOfResource(r) })),
  // Webhook endpoints, and the events they are sent (replay and history).
  { prefix: '/api/v1/webhook-endpoints', service: 'webhook-service' },
  { prefix: '/api/v1/events', service: 'webhook-service' },
  { prefix: '/settings', service: 'settings-web' },
];
