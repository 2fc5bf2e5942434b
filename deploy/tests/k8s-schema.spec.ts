import * as models from 'kubernetes-models';
import { baseFiles, K8sObject, OVERLAYS, render, renderOverlay } from './support/manifests';

type Validatable = new (data: K8sObject) => { validate(): void };

/**
 * The kubernetes-models class for an apiVersion and kind: `apps/v1` → models.apps.v1, core `v1` →
 * models.v1, `networking.k8s.io/v1` → models.networkingK8sIo.v1. Undefined when it knows no such kind.
 */
function modelFor(apiVersion: string, kind: string): Validatable | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const registry = models as unknown as Record<string, Record<string, Record<string, Validatable>>>;
  if (!group) return (models as unknown as Record<string, Record<string, Validatable>>)[version]?.[kind];
  const key = group.replace(/\.([a-z])/g, (_m, c: string) => c.toUpperCase());
  return registry[key]?.[version]?.[kind];
}

/**
 * kustomize v5 wraps the base64 of generated Secrets over several lines; the API server ignores the
 * line breaks (Go's base64 decoder does), the schema's "byte" format does not. Validate what the
 * server sees.
 */
function asServerSees(object: K8sObject): K8sObject {
  if (object.kind !== 'Secret' || !object.data) return object;
  const data = Object.fromEntries(Object.entries(object.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s+/g, '')]));
  return { ...object, data };
}

/** Every schema violation of an object, or [] when it is valid. */
function violations(object: K8sObject): string[] {
  const Model = modelFor(object.apiVersion, object.kind);
  if (!Model) return [`no Kubernetes schema for ${object.apiVersion} ${object.kind}`];
  try {
    new Model(asServerSees(object)).validate();
    return [];
  } catch (e) {
    return [(e as Error).message];
  }
}

const label = (o: K8sObject) => `${o.kind}/${o.metadata?.name}`;

describe('Kubernetes manifests against the Kubernetes schemas', () => {
  it('rejects an invalid object (the validator is live)', () => {
    const broken = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'x' },
      spec: { selector: {}, template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: '3001' }] }] } } },
    } as unknown as K8sObject;
    expect(violations(broken).join(' ')).toMatch(/containerPort must be integer/);
    expect(violations({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).toEqual([
      'no Kubernetes schema for example.com/v1 Widget',
    ]);
  });

  it.each(baseFiles().map((f) => [f.file, f.objects] as const))('base file %s is valid', (_file, objects) => {
    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) expect({ object: label(object), problems: violations(object) }).toEqual({ object: label(object), problems: [] });
  });

  it('the rendered base is valid (generated ConfigMaps included)', () => {
    for (const object of render('base')) expect({ object: label(object), problems: violations(object) }).toEqual({ object: label(object), problems: [] });
  });

  it.each(OVERLAYS)('every object of the rendered %s overlay is valid and namespaced', (overlay) => {
    const objects = renderOverlay(overlay);
    expect(objects.length).toBeGreaterThan(20);
    for (const object of objects) {
      expect({ object: label(object), problems: violations(object) }).toEqual({ object: label(object), problems: [] });
      if (object.kind !== 'Namespace') expect({ object: label(object), namespace: object.metadata.namespace }).toEqual({ object: label(object), namespace: expect.stringMatching(/^invoicing/) });
    }
  });
});
