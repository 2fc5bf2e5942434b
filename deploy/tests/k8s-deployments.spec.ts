import { SERVICES } from '@invoicing/contracts';
import { baseFiles, K8sObject, ofKind, OVERLAYS, podSpecOf, render, renderOverlay } from './support/manifests';

/**
 * The Deployments, one per app of SERVICES, come from one patch set (base/service-deployment/, ADR 0020's deploy part):
 * each app's file holds what is its own, the rest is written once. These tests keep it so: the app
 * files state nothing the patch set states, and every rendered Deployment carries the shared parts.
 */
const SHARED_CONTAINER_FIELDS = ['args', 'startupProbe', 'livenessProbe', 'readinessProbe', 'lifecycle', 'securityContext', 'volumeMounts'] as const;
const SHARED_VARIABLES = ['HOST', 'NODE_ENV', 'LOG_LEVEL'];
const TOKEN_VERIFYING_VARIABLES = ['KAFKA_BROKERS', 'JWT_ISSUER', 'JWT_AUDIENCE', 'JWT_KEYS'];

function sharedParts(deployment: K8sObject): unknown {
  const pod = podSpecOf(deployment) as unknown as Record<string, unknown>;
  const container = podSpecOf(deployment).containers[0] as unknown as Record<string, unknown>;
  const spec = deployment.spec as Record<string, unknown>;
  return {
    strategy: spec.strategy,
    revisionHistoryLimit: spec.revisionHistoryLimit,
    pod: Object.fromEntries(['automountServiceAccountToken', 'terminationGracePeriodSeconds', 'securityContext', 'volumes'].map((k) => [k, pod[k]])),
    container: Object.fromEntries(SHARED_CONTAINER_FIELDS.map((k) => [k, container[k]])),
  };
}

describe('Deployments from one patch set (deploy/k8s/base/service-deployment)', () => {
  const appFiles = baseFiles().flatMap((f) => ofKind(f.objects, 'Deployment').map((d) => [f.file, d] as const));

  it('there is one per app of SERVICES, one per app file', () => {
    expect(appFiles.map(([file]) => file).sort()).toEqual(
      Object.keys(SERVICES)
        .sort()
        .map((app) => `base/${app}/deployment.yaml`),
    );
  });

  it.each(appFiles)('%s states none of the shared fields itself', (_file, deployment) => {
    const spec = deployment.spec as Record<string, unknown>;
    expect(Object.keys(spec).filter((k) => ['replicas', 'strategy', 'revisionHistoryLimit'].includes(k))).toEqual([]);
    const pod = podSpecOf(deployment) as unknown as Record<string, unknown>;
    expect(Object.keys(pod).filter((k) => ['securityContext', 'volumes', 'automountServiceAccountToken', 'terminationGracePeriodSeconds'].includes(k))).toEqual([]);
    const [container] = podSpecOf(deployment).containers;
    expect(SHARED_CONTAINER_FIELDS.filter((k) => k in container)).toEqual([]);
    const names = (container.env ?? []).map((v) => v.name);
    expect(names.filter((n) => SHARED_VARIABLES.includes(n) || TOKEN_VERIFYING_VARIABLES.includes(n))).toEqual([]);
  });

  it.each(['base', ...OVERLAYS.map((o) => `overlays/${o}`)])('in %s every Deployment carries the same shared parts and variables', (dir) => {
    const deployments = ofKind(dir === 'base' ? render('base') : renderOverlay(dir.replace('overlays/', '') as (typeof OVERLAYS)[number]), 'Deployment');
    expect(deployments).toHaveLength(Object.keys(SERVICES).length);
    const [first, ...rest] = deployments;
    expect(podSpecOf(first).containers[0].readinessProbe?.httpGet?.path).toBe('/health/ready');
    for (const d of rest) expect({ name: d.metadata.name, shared: sharedParts(d) }).toEqual({ name: d.metadata.name, shared: sharedParts(first) });
    for (const d of deployments) {
      const names = (podSpecOf(d).containers[0].env ?? []).map((v) => v.name);
      const expected = d.metadata.name.endsWith('-service') ? [...SHARED_VARIABLES, ...TOKEN_VERIFYING_VARIABLES] : SHARED_VARIABLES;
      expect({ name: d.metadata.name, missing: expected.filter((n) => !names.includes(n)) }).toEqual({ name: d.metadata.name, missing: [] });
      // A variable listed twice (the app file and the patch set) would be a silent override.
      expect({ name: d.metadata.name, duplicates: names.filter((n, i) => names.indexOf(n) !== i) }).toEqual({ name: d.metadata.name, duplicates: [] });
    }
    const settings = deployments.filter((d) => d.metadata.name === 'settings-web');
    expect(settings).toHaveLength(1);
    expect(podSpecOf(settings[0]).containers[0].env?.map((v) => v.name).filter((n) => TOKEN_VERIFYING_VARIABLES.includes(n))).toEqual([]);
  });
});
