/**
 * Where the local stack (tools/stack/start.sh --instances N) runs several instances of a service on
 * one machine. No import on purpose: tools/stack/services.ts reads this file by its path.
 *
 * Instance i (1, 2, ...) of a service listens at its port of SERVICES + INSTANCE_PORT_STEP × (i − 1):
 * the auth service at 3001, 3011, 3021, 3031, the invoice service at 3002, 3012, ..., the webhook
 * service at 3020, 3030, 3040, 3050. The ports of the platform table are below 3011 but the webhook
 * service's 3020, which no other instance takes (stackInstances refuses a collision), and no other
 * port of the repository is in 3011-3050 (the benchmark's second instances sit at port + 100, the
 * end-to-end and resilience tiers in 41xx-43xx).
 */
export const INSTANCE_PORT_STEP = 10;

/** Most instances of one service the local stack runs. */
export const MAX_INSTANCES = 4;

/** Kinds the stack runs once whatever the count asked for: settings-web (static pages) and the gateway. */
const SINGLE_INSTANCE_KINDS: readonly string[] = ['web', 'gateway'];

/** How many instances of a service of `kind` run when `instances` are asked for (1 to MAX_INSTANCES). */
export function instancesOf(kind: string, instances: number): number {
  if (!(Number.isInteger(instances) && instances >= 1 && instances <= MAX_INSTANCES)) {
    throw new Error(`instances must be a whole number from 1 to ${MAX_INSTANCES}, not ${instances}`);
  }
  return SINGLE_INSTANCE_KINDS.includes(kind) ? 1 : instances;
}

/** Port of instance `instance` (1-based) of a service whose first instance listens at `port`. */
export function instancePort(port: number, instance: number): number {
  return port + INSTANCE_PORT_STEP * (instance - 1);
}

/**
 * Every instance of every service as the local stack runs it, `instances` of each but the single-
 * instance kinds. Throws when two instances would share a port (a service added to the table at a
 * port another's instance already uses).
 */
export function stackInstances<Name extends string>(
  services: Record<Name, { port: number; kind: string }>,
  instances: number,
): { name: Name; instance: number; port: number; kind: string }[] {
  const rows: { name: Name; instance: number; port: number; kind: string }[] = [];
  const owner = new Map<number, string>();
  for (const [name, { port, kind }] of Object.entries(services) as [Name, { port: number; kind: string }][]) {
    for (let instance = 1; instance <= instancesOf(kind, instances); instance++) {
      const at = instancePort(port, instance);
      const taken = owner.get(at);
      if (taken) throw new Error(`port ${at} would serve both ${taken} and ${name} instance ${instance}`);
      owner.set(at, `${name} instance ${instance}`);
      rows.push({ name, instance, port: at, kind });
    }
  }
  return rows;
}
