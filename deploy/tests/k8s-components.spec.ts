import { SERVICES, ServiceName } from '@invoicing/contracts';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { baseAppDirs, componentObjects, K8S_DIR, K8sObject, kustomizationOf, named, render } from './support/manifests';
import { landedServices } from './support/platform';

/**
 * What every app's manifests share is written once, as kustomize Components (deploy/k8s/components):
 * `app` (Service, HorizontalPodAutoscaler, PodDisruptionBudget, NetworkPolicy) for every app, and
 * `service` (data-store egress, migration Job and its NetworkPolicy) for the API services. An app's
 * directory holds its Deployment and a kustomization.yaml, nothing else. These tests keep it so, and
 * check that every rendered object is the component's with only the app's name and port filled in.
 */

/** The component's object as its replacements fill it for one app: the name for APP/SERVICE, the port for 1. */
function filled(object: K8sObject, name: string, port: number): K8sObject {
  const json = JSON.stringify(object)
    .replace(/\b(APP|SERVICE)\b/g, name)
    .replace(/"port":1(?=[,}])/g, `"port":${port}`);
  return JSON.parse(json) as K8sObject;
}

const isApiService = (name: string) => name.endsWith('-service');
/** The API services that verify other services' credentials and ask with their own (SERVICE_TOKEN_KEYS). */
const isResourceService = (name: string) => SERVICES[name as ServiceName]?.kind === 'resource';

/** A rendered object with the generated ConfigMaps' names as written (kustomize appends a hash). */
function unhashed(object: K8sObject | undefined): K8sObject | undefined {
  return object && (JSON.parse(JSON.stringify(object).replace(/"(invoicing-platform|postgres-bootstrap)-[a-z0-9]{10}"/g, '"$1"')) as K8sObject);
}

describe('Kubernetes components (deploy/k8s/components): one place for what every app shares', () => {
  const base = render('base');
  const services = landedServices();

  it('the base lists one directory per app of SERVICES that exists in this checkout', () => {
    expect(baseAppDirs().sort()).toEqual([...services].sort());
  });

  it.each(baseAppDirs())('base/%s holds its deployment.yaml and a kustomization.yaml using the components, nothing else', (app) => {
    expect(readdirSync(join(K8S_DIR, 'base', app)).sort()).toEqual(['deployment.yaml', 'kustomization.yaml']);
    const own = kustomizationOf(`base/${app}`);
    expect(own.resources).toEqual(['deployment.yaml']);
    const components = ['../../components/app', ...(isApiService(app) ? ['../../components/service'] : []), ...(isResourceService(app) ? ['../../components/resource-service'] : [])];
    expect(own.components).toEqual(components);
  });

  it.each(services.filter(isApiService))('%s: the service-credential ring on its Deployment and migration Job exactly when it is a resource service', (name) => {
    for (const object of [named(base, 'Deployment', name), named(base, 'Job', `${name}-migrate`)]) {
      const env = ((object?.spec as { template: { spec: { containers: Array<{ env: Array<{ name: string; valueFrom?: unknown }> }> } } }).template.spec.containers[0].env);
      const ring = env.find((e) => e.name === 'SERVICE_TOKEN_KEYS');
      expect({ name, ring }).toEqual({ name, ring: isResourceService(name) ? { name: 'SERVICE_TOKEN_KEYS', valueFrom: { secretKeyRef: { name: 'invoicing-service-token-keys', key: 'SERVICE_TOKEN_KEYS' } } } : undefined });
    }
  });

  it('the components name no app: every name is a placeholder the replacements fill in', () => {
    const text = JSON.stringify([...componentObjects('app'), ...componentObjects('service')]);
    for (const name of Object.keys(SERVICES)) expect({ name, named: text.includes(name) }).toEqual({ name, named: false });
  });

  it.each(services)('%s: its Service and PodDisruptionBudget are exactly the component’s, its autoscaler too but for maxReplicas', (name) => {
    const port = SERVICES[name].port;
    const template = (kind: string) => filled(componentObjects('app').find((o) => o.kind === kind) as K8sObject, name, port);
    expect(named(base, 'Service', name)).toEqual(template('Service'));
    expect(named(base, 'PodDisruptionBudget', name)).toEqual(template('PodDisruptionBudget'));
    const hpa = named(base, 'HorizontalPodAutoscaler', name) as K8sObject;
    const hpaTemplate = template('HorizontalPodAutoscaler');
    const withoutMax = (o: K8sObject) => ({ ...o, spec: { ...(o.spec as Record<string, unknown>), maxReplicas: undefined } });
    expect(withoutMax(hpa)).toEqual(withoutMax(hpaTemplate));
  });

  it.each(services)('%s: its NetworkPolicy is the component’s ingress rule on its port, plus what it states itself', (name) => {
    const policy = named(base, 'NetworkPolicy', name) as K8sObject;
    const template = filled(componentObjects('app').find((o) => o.kind === 'NetworkPolicy') as K8sObject, name, SERVICES[name].port);
    type Spec = { podSelector: unknown; policyTypes: string[]; ingress: { from: unknown[]; ports: unknown[] }[] };
    const spec = policy.spec as Spec;
    const templateSpec = template.spec as Spec;
    expect(policy.metadata).toEqual(template.metadata);
    expect({ podSelector: spec.podSelector, policyTypes: spec.policyTypes }).toEqual({ podSelector: templateSpec.podSelector, policyTypes: templateSpec.policyTypes });
    expect(spec.ingress).toHaveLength(1);
    expect(spec.ingress[0].ports).toEqual(templateSpec.ingress[0].ports);
    expect(spec.ingress[0].from.slice(0, templateSpec.ingress[0].from.length)).toEqual(templateSpec.ingress[0].from);
  });

  it.each(services.filter(isApiService))('%s: its migration Job and the Job’s NetworkPolicy are exactly the component’s', (name) => {
    const port = SERVICES[name].port;
    for (const kind of ['Job', 'NetworkPolicy']) {
      const template = filled(componentObjects('service').find((o) => o.kind === kind) as K8sObject, name, port);
      const rendered = JSON.parse(JSON.stringify(unhashed(named(base, kind, `${name}-migrate`)))) as K8sObject;
      if (kind === 'Job') {
        // Besides the component's variables, the service's own secrets, exactly as its Deployment has
        // them: `migrate` validates the whole configuration (components/resource-service's ring,
        // checked on its own above; the webhook service's secrets key).
        type Env = Array<{ name: string; valueFrom?: { secretKeyRef?: unknown } }>;
        const envOf = (o: K8sObject | undefined) => (o?.spec as { template: { spec: { containers: Array<{ env: Env }> } } }).template.spec.containers[0].env;
        const fromComponent = new Set(envOf(template).map((e) => e.name));
        const deployment = envOf(unhashed(named(base, 'Deployment', name)));
        const container = (rendered.spec as { template: { spec: { containers: Array<{ env: Env }> } } }).template.spec.containers[0];
        container.env = container.env.filter((e) => fromComponent.has(e.name) || !(e.valueFrom?.secretKeyRef && deployment.some((d) => isDeepStrictEqual(d, e))));
      }
      expect(rendered).toEqual(template);
    }
  });
});
