import { ResourceServiceName, SERVICES, ServiceName as PlatformService } from '@invoicing/contracts';

/** Every service of the platform, in SERVICES order (the auth service, one per resource, the settings page). */
export const ALL_SERVICES = Object.keys(SERVICES) as PlatformService[];

/** The auth service and the resource services: the platform's API, each with a schema its `migrate` creates. */
export type ApiService = 'auth-service' | ResourceServiceName;

/** The auth service and every resource service, in SERVICES order. */
export const API_SERVICES: readonly ApiService[] = ALL_SERVICES.filter((s): s is ApiService => SERVICES[s].kind === 'auth' || SERVICES[s].kind === 'resource');

/**
 * A spec's ports: `first`, `first + 1`, ... for `services` in that order (by default API_SERVICES),
 * and `gateway` for the gateway. Taken from SERVICES, so a new resource's service gets the next port
 * of the spec's block; the gateway's port is refused if a service would land on it.
 */
export function platformPorts<S extends PlatformService = ApiService>(options: {
  first: number;
  gateway: number;
  services?: readonly S[];
}): Record<S, number> & { gateway: number } {
  const services = options.services ?? (API_SERVICES as readonly PlatformService[] as readonly S[]);
  const ports = services.map((service, i) => [service, options.first + i] as const);
  const clash = ports.find(([, port]) => port === options.gateway);
  if (clash) throw new Error(`${clash[0]} would get the gateway's port ${options.gateway}: move the spec's gateway port`);
  return { ...(Object.fromEntries(ports) as Record<S, number>), gateway: options.gateway };
}
