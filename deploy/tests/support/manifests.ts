import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from './platform';

/** A Kubernetes object as parsed from YAML; the tests narrow it field by field. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export const K8S_DIR = join(ROOT, 'deploy/k8s');
export const OVERLAYS = ['dev', 'prod'] as const;
export type Overlay = (typeof OVERLAYS)[number];

function parseObjects(text: string, origin: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${origin}: ${doc.errors[0].message}`);
      return doc.toJSON() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

/** The resources a kustomization.yaml lists, and the components it uses. */
export function kustomizationOf(dir: string): { resources: string[]; components: string[] } {
  const k = parse(readFileSync(join(K8S_DIR, dir, 'kustomization.yaml'), 'utf8')) as { resources?: string[]; components?: string[] };
  return { resources: k.resources ?? [], components: k.components ?? [] };
}

/**
 * The files of the base, one by one as written (before kustomize), with their path. A directory the
 * base lists (an app's: base/<app>/) contributes the files its own kustomization.yaml lists; the
 * components it uses are not its files (components() reads them).
 */
export function baseFiles(): { file: string; objects: K8sObject[] }[] {
  const filesOf = (dir: string): string[] =>
    kustomizationOf(dir).resources.flatMap((entry) =>
      existsSync(join(K8S_DIR, dir, entry, 'kustomization.yaml')) ? filesOf(join(dir, entry)) : [join(dir, entry)],
    );
  return filesOf('base').map((file) => ({ file, objects: parseObjects(readFileSync(join(K8S_DIR, file), 'utf8'), file) }));
}

/** The apps of the base: the directories it lists (base/<app>/), each with its own kustomization.yaml. */
export function baseAppDirs(): string[] {
  return kustomizationOf('base').resources.filter((entry) => existsSync(join(K8S_DIR, 'base', entry, 'kustomization.yaml')));
}

/** The objects a component (deploy/k8s/components/<name>) adds, as written: placeholders unfilled. */
export function componentObjects(name: string): K8sObject[] {
  return kustomizationOf(`components/${name}`).resources.flatMap((file) =>
    parseObjects(readFileSync(join(K8S_DIR, 'components', name, file), 'utf8'), `components/${name}/${file}`),
  );
}

const rendered = new Map<string, K8sObject[]>();

/**
 * `kubectl kustomize <dir>` (offline; kubectl 1.21 or later, whose kustomize applies patches by
 * target selector). `dir` is `base` or `overlays/<name>`.
 */
export function render(dir: string): K8sObject[] {
  const cached = rendered.get(dir);
  if (cached) return cached;
  let output: string;
  try {
    output = execFileSync('kubectl', ['kustomize', join(K8S_DIR, dir)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { code?: string; stderr?: string; message: string };
    if (err.code === 'ENOENT') throw new Error('kubectl is not installed: the deploy tests need kubectl 1.21 or later (deploy/README.md)');
    throw new Error(`kubectl kustomize ${dir} failed: ${err.stderr ?? err.message}`);
  }
  const objects = parseObjects(output, dir);
  rendered.set(dir, objects);
  return objects;
}

export function renderOverlay(overlay: Overlay): K8sObject[] {
  return render(`overlays/${overlay}`);
}

export function ofKind(objects: readonly K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export function named(objects: readonly K8sObject[], kind: string, name: string): K8sObject | undefined {
  return objects.find((o) => o.kind === kind && o.metadata.name === name);
}

/** A generated ConfigMap or Secret carries a hash suffix after kustomize; match either form. */
export function generated(objects: readonly K8sObject[], kind: 'ConfigMap' | 'Secret', name: string): K8sObject | undefined {
  return objects.find((o) => o.kind === kind && (o.metadata.name === name || new RegExp(`^${name}-[a-z0-9]{10}$`).test(o.metadata.name)));
}

// ---- pod specs ------------------------------------------------------------------------------------

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: unknown;
  };
}

export interface HttpProbe {
  httpGet?: { path: string; port: number | string };
  periodSeconds?: number;
  failureThreshold?: number;
}

export interface Container {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  env?: EnvVar[];
  envFrom?: unknown[];
  ports?: { name?: string; containerPort: number }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  startupProbe?: HttpProbe;
  livenessProbe?: HttpProbe;
  readinessProbe?: HttpProbe;
  securityContext?: {
    runAsNonRoot?: boolean;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
  };
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  automountServiceAccountToken?: boolean;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  volumes?: { name: string; configMap?: { name: string } }[];
}

/** The pod template of a Deployment or Job. */
export function podSpecOf(workload: K8sObject): PodSpec {
  const spec = workload.spec as { template?: { spec?: PodSpec } };
  if (!spec?.template?.spec) throw new Error(`${workload.kind}/${workload.metadata.name} has no pod template`);
  return spec.template.spec;
}

export function podLabelsOf(workload: K8sObject): Record<string, string> {
  return (workload.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
}

/** Deployments and Jobs: everything that runs a container. */
export function workloads(objects: readonly K8sObject[]): K8sObject[] {
  return objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
}
