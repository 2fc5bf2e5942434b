import { isPlaceholderSecret } from '@invoicing/service-kit';
import { appOf, environmentOf, isMigration, loadCompose } from './support/compose';
import { Container, EnvVar, generated, K8sObject, named, OVERLAYS, podSpecOf, render, renderOverlay, workloads } from './support/manifests';
import { SERVICES } from '@invoicing/contracts';
import { connectionVariables, dependenciesOf, envSpecOf, EnvVariable, landedServices, peerVariable } from './support/platform';

/** Where a Kubernetes container's variable comes from. */
type Source = { kind: 'value'; value: string } | { kind: 'configMap'; name: string; key: string } | { kind: 'secret'; name: string; key: string; optional: boolean };

function sourceOf(env: EnvVar): Source {
  if (env.value !== undefined) return { kind: 'value', value: env.value };
  const cm = env.valueFrom?.configMapKeyRef;
  if (cm) return { kind: 'configMap', name: cm.name, key: cm.key };
  const secret = env.valueFrom?.secretKeyRef;
  if (secret) return { kind: 'secret', name: secret.name, key: secret.key, optional: !!secret.optional };
  throw new Error(`variable ${env.name} has an unsupported source`);
}

function containerOf(workload: K8sObject, app: string): Container {
  const containers = podSpecOf(workload).containers;
  expect(containers).toHaveLength(1);
  expect(containers[0].image).toMatch(new RegExp(`(^|/)invoicing/${app}(:|$)`));
  // Variables are listed one by one, so every one of them is checked below.
  expect(containers[0].envFrom).toBeUndefined();
  return containers[0];
}

/**
 * The checks shared by a Deployment and a migration Job: only variables the app reads, no variable
 * twice, every secret-flagged one from a Secret, every ConfigMap key that exists.
 */
function checkK8sEnv(objects: readonly K8sObject[], workload: K8sObject, app: string, spec: readonly EnvVariable[]): Map<string, Source> {
  const where = `${workload.kind}/${workload.metadata.name}`;
  const env = containerOf(workload, app).env ?? [];
  const known = new Map(spec.map((v) => [v.name, v]));
  const sources = new Map<string, Source>();
  for (const variable of env) {
    expect({ where, variable: variable.name, readByApp: known.has(variable.name) }).toEqual({ where, variable: variable.name, readByApp: true });
    expect({ where, duplicate: sources.has(variable.name) ? variable.name : undefined }).toEqual({ where, duplicate: undefined });
    const source = sourceOf(variable);
    sources.set(variable.name, source);
    if (known.get(variable.name)?.secret) {
      expect({ where, variable: variable.name, from: source.kind }).toEqual({ where, variable: variable.name, from: 'secret' });
    }
    if (source.kind === 'configMap') {
      const configMap = generated(objects, 'ConfigMap', source.name);
      expect({ where, configMap: source.name, exists: !!configMap }).toEqual({ where, configMap: source.name, exists: true });
      expect({ where, key: source.key, inConfigMap: source.key in ((configMap?.data as Record<string, string>) ?? {}) }).toEqual({ where, key: source.key, inConfigMap: true });
    }
  }
  for (const v of spec.filter((s) => s.required)) expect({ where, required: v.name, set: sources.has(v.name) }).toEqual({ where, required: v.name, set: true });
  return sources;
}

describe('environment variables match what each service reads (its env-spec)', () => {
  const compose = loadCompose();
  const services = landedServices();

  it('every landed service declares its variables (env-spec runs)', () => {
    expect(services.length).toBeGreaterThan(0);
    for (const name of services) expect(envSpecOf(name).length).toBeGreaterThan(0);
  });

  describe('docker-compose.yml', () => {
    it('sets only variables the app reads, with compose host names instead of loopback', () => {
      for (const [serviceName, service] of Object.entries(compose.services)) {
        const app = appOf(service);
        if (!app) continue;
        const names = new Set(envSpecOf(app).map((v) => v.name));
        for (const [key, value] of Object.entries(environmentOf(service))) {
          expect({ serviceName, key, readByApp: names.has(key) }).toEqual({ serviceName, key, readByApp: true });
          expect({ serviceName, key, value }).toEqual({ serviceName, key, value: expect.not.stringMatching(/127\.0\.0\.1|localhost/) });
        }
        for (const v of envSpecOf(app).filter((s) => s.required)) expect({ serviceName, required: v.name, set: v.name in environmentOf(service) }).toEqual({ serviceName, required: v.name, set: true });
      }
    });

    it('holds secrets only as obvious development values, and then runs in development mode', () => {
      for (const [serviceName, service] of Object.entries(compose.services)) {
        const app = appOf(service);
        if (!app) continue;
        const env = environmentOf(service);
        const secrets = envSpecOf(app).filter((v) => v.secret && v.name in env);
        for (const v of secrets) expect({ serviceName, secret: v.name, placeholder: isPlaceholderSecret(env[v.name]) }).toEqual({ serviceName, secret: v.name, placeholder: true });
        if (secrets.length > 0) expect({ serviceName, NODE_ENV: env.NODE_ENV }).toEqual({ serviceName, NODE_ENV: 'development' });
      }
    });

    it('gives each service the connections it needs: its database, and Redis and Kafka where it reads them', () => {
      for (const name of services) {
        const spec = new Set(envSpecOf(name).map((v) => v.name));
        const env = environmentOf(compose.services[name]);
        if (spec.has('DATABASE_URL')) expect(env.DATABASE_URL).toMatch(/@postgres:5432\/invoicing$/);
        if (spec.has('REDIS_URL')) expect(env.REDIS_URL).toMatch(/^redis:\/\/redis:6379/);
        if (spec.has('KAFKA_BROKERS')) expect(env.KAFKA_BROKERS).toBe('kafka:9092');
        for (const migrate of Object.values(compose.services).filter((s) => appOf(s) === name && isMigration(s))) {
          expect(environmentOf(migrate).MIGRATION_DATABASE_URL).toMatch(/_owner:.*@postgres:5432\/invoicing$/);
        }
      }
    });
  });

  describe('Kubernetes', () => {
    it('the base holds no Secret and no secret value: secrets are references only', () => {
      const base = render('base');
      expect(base.filter((o) => o.kind === 'Secret')).toEqual([]);
      for (const name of services) {
        const secretNames = new Set(envSpecOf(name).filter((v) => v.secret).map((v) => v.name));
        for (const configMap of base.filter((o) => o.kind === 'ConfigMap')) {
          for (const key of Object.keys((configMap.data as Record<string, string>) ?? {})) expect({ configMap: configMap.metadata.name, key, secret: secretNames.has(key) }).toEqual({ configMap: configMap.metadata.name, key, secret: false });
        }
      }
    });

    it.each(['base', ...OVERLAYS.map((o) => `overlays/${o}`)])('%s: each Deployment sets only what its service reads, every secret from a Secret', (dir) => {
      const objects = dir === 'base' ? render('base') : renderOverlay(dir.replace('overlays/', '') as (typeof OVERLAYS)[number]);
      for (const name of services) {
        const spec = envSpecOf(name);
        const deployment = named(objects, 'Deployment', name);
        expect({ name, deployment: !!deployment }).toEqual({ name, deployment: true });
        const sources = checkK8sEnv(objects, deployment as K8sObject, name, spec);
        // Production refuses to start without each secret (no development default), so all are set.
        for (const v of spec.filter((s) => s.secret)) expect({ name, secret: v.name, set: sources.get(v.name)?.kind }).toEqual({ name, secret: v.name, set: 'secret' });
        expect(sources.get('NODE_ENV')).toEqual({ kind: 'configMap', name: expect.stringMatching(/^invoicing-platform/), key: 'NODE_ENV' });
        // Loopback defaults mean nothing in a pod: every connection variable is set.
        for (const variable of connectionVariables(spec)) expect({ name, variable, set: sources.has(variable) }).toEqual({ name, variable, set: true });
        for (const peer of dependenciesOf(spec).peers) {
          expect({ name, peer, url: sources.get(peerVariable(peer)) }).toEqual({ name, peer, url: { kind: 'value', value: `http://${peer}:${SERVICES[peer].port}` } });
        }
      }
    });

    it.each(OVERLAYS)('%s: every Secret a container refers to exists with that key, or is provisioned outside (prod)', (overlay) => {
      const objects = renderOverlay(overlay);
      for (const workload of objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job')) {
        for (const container of podSpecOf(workload).containers) {
          for (const variable of container.env ?? []) {
            const ref = variable.valueFrom?.secretKeyRef;
            if (!ref) continue;
            const secret = generated(objects, 'Secret', ref.name);
            if (overlay === 'prod') {
              // Production secrets are created by the platform team, never rendered from the repository.
              expect({ secret: ref.name, rendered: !!secret }).toEqual({ secret: ref.name, rendered: false });
              continue;
            }
            expect({ secret: ref.name, exists: !!secret }).toEqual({ secret: ref.name, exists: true });
            if (!ref.optional) expect({ secret: ref.name, key: ref.key, present: ref.key in ((secret?.data as Record<string, string>) ?? {}) }).toEqual({ secret: ref.name, key: ref.key, present: true });
          }
        }
      }
    });

    it('a migration Job per service with a schema runs `migrate` with the owner credentials from its Secret', () => {
      const objects = render('base');
      for (const name of services) {
        const spec = envSpecOf(name);
        const job = named(objects, 'Job', `${name}-migrate`);
        if (!spec.some((v) => v.name === 'MIGRATION_DATABASE_URL')) {
          expect({ name, job }).toEqual({ name, job: undefined });
          continue;
        }
        expect({ name, job: !!job }).toEqual({ name, job: true });
        const sources = checkK8sEnv(objects, job as K8sObject, name, spec);
        expect(containerOf(job as K8sObject, name).args).toEqual(['migrate']);
        expect(sources.get('MIGRATION_DATABASE_URL')).toEqual({ kind: 'secret', name: `${name}-database`, key: 'MIGRATION_DATABASE_URL', optional: false });
      }
    });

    it('lets the webhook service reach private addresses only in development: never in the base or the prod overlay', () => {
      // The value each workload's WEBHOOK_ALLOW_PRIVATE_URLS resolves to (unset: the service's default, false).
      const allowed = (objects: readonly K8sObject[]) =>
        workloads(objects).flatMap((workload) =>
          (podSpecOf(workload).containers[0].env ?? [])
            .filter((v) => v.name === 'WEBHOOK_ALLOW_PRIVATE_URLS')
            .map((v) => {
              const source = sourceOf(v);
              const value = source.kind === 'configMap' ? (generated(objects, 'ConfigMap', source.name)?.data as Record<string, string>)[source.key] : source.kind === 'value' ? source.value : 'from a Secret';
              return { workload: workload.metadata.name, value };
            }),
        );
      for (const objects of [render('base'), renderOverlay('prod')]) {
        for (const { workload, value } of allowed(objects)) expect({ workload, value }).toEqual({ workload, value: 'false' });
      }
      const nodeEnv = (generated(renderOverlay('dev'), 'ConfigMap', 'invoicing-platform')?.data as Record<string, string>).NODE_ENV;
      for (const { workload, value } of allowed(renderOverlay('dev'))) if (value === 'true') expect({ workload, nodeEnv }).toEqual({ workload, nodeEnv: 'development' });
      for (const [serviceName, service] of Object.entries(compose.services)) {
        const env = environmentOf(service);
        if (env.WEBHOOK_ALLOW_PRIVATE_URLS === 'true') expect({ serviceName, NODE_ENV: env.NODE_ENV }).toEqual({ serviceName, NODE_ENV: 'development' });
      }
    });

    it('the dev overlay runs in development mode (its generated secrets are development values), prod in production', () => {
      const platform = (overlay: (typeof OVERLAYS)[number]) => generated(renderOverlay(overlay), 'ConfigMap', 'invoicing-platform')?.data as Record<string, string>;
      expect(platform('dev').NODE_ENV).toBe('development');
      expect(platform('prod').NODE_ENV).toBe('production');
      const secretKeys = new Set(['PGPASSWORD', ...services.flatMap((name) => envSpecOf(name).filter((v) => v.secret).map((v) => v.name))]);
      for (const secret of renderOverlay('dev').filter((o) => o.kind === 'Secret')) {
        for (const [key, value] of Object.entries(secret.data as Record<string, string>).filter(([k]) => secretKeys.has(k))) {
          const decoded = Buffer.from(value, 'base64').toString('utf8');
          expect({ secret: secret.metadata.name, key, placeholder: isPlaceholderSecret(decoded) }).toEqual({ secret: secret.metadata.name, key, placeholder: true });
        }
      }
    });
  });
});
