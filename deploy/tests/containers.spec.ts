import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { loadCompose } from './support/compose';
import { parseNginxRouting } from './support/gateway';
import { K8sObject, ofKind, renderOverlay } from './support/manifests';
import { ROOT } from './support/platform';

/**
 * What the containers tier (deploy/containers.sh) runs through podman, checked offline: the compose
 * start order of tools/compose/plan.cjs and the kube play rendering of deploy/kube-play/render.cjs.
 * The tier itself proves they work; these prove they say what they mean, on every machine.
 */

function node(script: string, args: string[]): { stdout: string; status: number | null; stderr: string } {
  const { stdout, stderr, status } = spawnSync(process.execPath, [join(ROOT, script), ...args], { cwd: ROOT, encoding: 'utf8' });
  return { stdout, stderr, status };
}

describe('tools/compose/plan.cjs (compose order for podman-compose 1.0.3)', () => {
  it('starts infrastructure, then one-shots, then services, then the gateway, each waited for as compose would', () => {
    const { stdout, status } = node('tools/compose/plan.cjs', ['--check']);
    expect(status).toBe(0);
    const lines = stdout.trim().split('\n').map((l) => l.split(' '));
    const waveOf = Object.fromEntries(lines.map(([wave, name]) => [name, Number(wave)]));
    const untilOf = Object.fromEntries(lines.map(([, name, until]) => [name, until]));
    expect(waveOf).toMatchObject({ postgres: 0, redis: 0, kafka: 0, 'kafka-topics': 1, 'auth-service-migrate': 1, 'auth-service': 2, gateway: 3 });
    expect(untilOf).toMatchObject({ postgres: 'healthy', 'kafka-topics': 'exited', 'invoice-service-migrate': 'exited', 'auth-service': 'healthy', gateway: 'healthy' });
  });

  it('refuses a condition the dependency cannot satisfy', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plan-'));
    try {
      const file = join(dir, 'compose.yml');
      writeFileSync(file, 'services:\n  db: { image: x }\n  app: { image: y, depends_on: { db: { condition: service_healthy } } }\n');
      const result = node('tools/compose/plan.cjs', ['--check', '-f', file]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('app waits for db to be service_healthy, but db has no health check');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('deploy/kube-play/render.cjs (the dev overlay for podman kube play)', () => {
  const overlay = renderOverlay('dev');
  let out: string;
  let plan: string[][];
  let pods: Map<string, K8sObject[]>;
  let stderr: string;

  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'kube-play-'));
    const input = join(out, 'dev.yaml');
    writeFileSync(input, execFileSync('kubectl', ['kustomize', join(ROOT, 'deploy/k8s/overlays/dev')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    const result = node('deploy/kube-play/render.cjs', [input, out, '10.89.77']);
    expect(result.status).toBe(0);
    stderr = result.stderr;
    plan = readFileSync(join(out, 'plan.tsv'), 'utf8').trim().split('\n').map((l) => l.split('\t'));
    pods = new Map(plan.map(([, name, , file]) => [name, parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJSON() as K8sObject)]));
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  const podSpecOf = (name: string): { hostAliases: { ip: string; hostnames: string[] }[]; volumes?: { name: string; emptyDir?: unknown }[]; restartPolicy?: string } => {
    const doc = (pods.get(name) ?? []).find((d) => d.kind === 'Pod' || d.kind === 'Deployment') as K8sObject & {
      spec: { template?: { spec: unknown } };
    };
    return (doc.kind === 'Deployment' ? doc.spec.template?.spec : doc.spec) as ReturnType<typeof podSpecOf>;
  };

  it('plays every Deployment as a Deployment at its own address, with the probe of its manifest', () => {
    const deployments = ofKind(overlay, 'Deployment').map((d) => d.metadata.name).sort();
    const played = plan.filter(([kind]) => kind === 'deployment');
    expect(played.map(([, name]) => name).sort()).toEqual(deployments);
    expect(new Set(played.map(([, , ip]) => ip)).size).toBe(deployments.length);
    for (const [, name, , , path, port] of played) {
      expect({ name, path, port: Number(port) > 0 }).toEqual({ name, path: '/health/ready', port: true });
      expect(pods.get(name)?.find((d) => d.kind === 'Deployment')).toBeDefined();
    }
  });

  it('answers every Service name, and postgres, redis and kafka, with the address of what it selects', () => {
    const addressOf = Object.fromEntries(plan.map(([, name, ip]) => [name, ip]));
    const expected = [
      ...ofKind(overlay, 'Service').map((s) => [s.metadata.name, addressOf[s.metadata.name]]),
      ['postgres', addressOf.postgres],
      ['redis', addressOf.redis],
      ['kafka', addressOf.kafka],
    ].sort();
    for (const [, name] of plan) {
      const aliases = podSpecOf(name).hostAliases.map((a) => [a.hostnames[0], a.ip]).sort();
      expect({ name, aliases }).toEqual({ name, aliases: expected });
    }
  });

  it('turns each Job into a Pod that runs once, the database bootstrap first', () => {
    const jobs = plan.filter(([kind]) => kind === 'job').map(([, name]) => name);
    expect(jobs[0]).toBe('postgres-bootstrap-job');
    expect([...jobs].sort()).toEqual(ofKind(overlay, 'Job').map((j) => j.metadata.name).sort());
    for (const name of jobs) expect({ name, restart: podSpecOf(name).restartPolicy }).toEqual({ name, restart: 'Never' });
  });

  it('gives each pod emptyDir volumes of its own (podman would share one volume per name)', () => {
    const names = [...pods.keys()].flatMap((pod) => (podSpecOf(pod).volumes ?? []).filter((v) => v.emptyDir).map((v) => v.name));
    expect(names.length).toBeGreaterThan(10);
    expect(new Set(names).size).toBe(names.length);
  });

  it('stores each Secret as the JSON data map podman secretKeyRef reads, values unchanged', () => {
    const secrets = ofKind(overlay, 'Secret') as (K8sObject & { data: Record<string, string> })[];
    expect(readdirSync(join(out, 'secrets')).sort()).toEqual(secrets.map((s) => `${s.metadata.name}.json`).sort());
    for (const secret of secrets) expect(JSON.parse(readFileSync(join(out, 'secrets', `${secret.metadata.name}.json`), 'utf8'))).toEqual(secret.data);
  });

  it("routes the Ingress's backends through compose's nginx image with libs/gateway's configuration, and says which kinds are not played", () => {
    interface GatewayPod {
      spec: {
        securityContext: { runAsUser: number; runAsNonRoot: boolean };
        containers: {
          image: string;
          command: string[];
          volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
          securityContext: { readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean; capabilities: { drop: string[] } };
        }[];
        volumes: { name: string; configMap?: { name: string }; emptyDir?: unknown }[];
      };
    }
    const docs = pods.get('gateway') ?? [];
    const pod = docs.find((d) => d.kind === 'Pod') as K8sObject & GatewayPod;
    const [container] = pod.spec.containers;
    expect(container.image).toBe(loadCompose().services.gateway.image);
    expect(container.command.slice(0, 3)).toEqual(['nginx', '-e', 'stderr']);
    expect(container.command.slice(-2)).toEqual(['-g', 'daemon off;']);
    // The configuration: a ConfigMap of the pod's file, mounted where -c looks for it.
    const confPath = container.command[container.command.indexOf('-c') + 1];
    const mount = container.volumeMounts.find((m) => confPath.startsWith(`${m.mountPath}/`));
    const volume = pod.spec.volumes.find((v) => v.name === mount?.name);
    const configMap = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === volume?.configMap?.name) as K8sObject & { data: Record<string, string> };
    expect({ readOnly: mount?.readOnly, configMap: !!configMap }).toEqual({ readOnly: true, configMap: true });
    const conf = configMap.data[confPath.slice(`${mount?.mountPath}/`.length)];
    expect(conf).toMatch(/^# The platform gateway\. GENERATED by libs\/gateway/);
    // Its upstreams: exactly the Services the Ingress routes to, by name and port (the host aliases answer them).
    const services = ofKind(overlay, 'Service') as (K8sObject & { spec: { ports: { port: number }[] } })[];
    expect(Object.values(parseNginxRouting(conf).upstreams).sort()).toEqual(services.map((s) => `${s.metadata.name}:${s.spec.ports[0].port}`).sort());
    // Its runtime folder is the pod's own emptyDir on an otherwise read-only root, as uid 1000.
    expect(conf).toMatch(/^pid \/tmp\/nginx\.pid;$/m);
    const tmp = container.volumeMounts.find((m) => m.mountPath === '/tmp');
    expect(pod.spec.volumes.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
    expect(pod.spec.securityContext).toMatchObject({ runAsUser: 1000, runAsNonRoot: true });
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(stderr).toMatch(/not played \(validated offline only, deploy\/tests\): .*NetworkPolicy/);
  });
});
