import { API_KEYS_TOPIC, AUDIT_TOPIC, DOMAIN_TOPIC, REVOCATIONS_TOPIC, SERVICES, WEBHOOK_ENDPOINTS_TOPIC } from '@invoicing/contracts';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Container, generated, K8sObject, named, ofKind, OVERLAYS, podLabelsOf, podSpecOf, render, renderOverlay, workloads } from './support/manifests';
import { databaseOf, dependenciesOf, envSpecOf, INFRA_PORTS, internetPortsOf, landedServices, NON_PUBLIC_RANGES, ROOT } from './support/platform';
import { asStated, topicCreations, topicsOfAsyncApi } from './support/topics';

interface PolicyPeer {
  namespaceSelector?: { matchLabels?: Record<string, string> };
  podSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string; except?: string[] };
}
interface PolicyRule {
  from?: PolicyPeer[];
  to?: PolicyPeer[];
  ports?: { protocol?: string; port: number | string }[];
}
interface PolicySpec {
  podSelector: { matchLabels?: Record<string, string> };
  policyTypes: string[];
  ingress?: PolicyRule[];
  egress?: PolicyRule[];
}

const policySpec = (p: K8sObject) => p.spec as PolicySpec;

function matches(selector: { matchLabels?: Record<string, string> }, labels: Record<string, string>): boolean {
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

/** Policies that select a pod with these labels (an empty selector selects every pod). */
function policiesFor(objects: readonly K8sObject[], labels: Record<string, string>): PolicySpec[] {
  return ofKind(objects, 'NetworkPolicy').map(policySpec).filter((p) => matches(p.podSelector, labels));
}

function ports(rules: readonly PolicyRule[] | undefined): number[] {
  return [...new Set((rules ?? []).flatMap((r) => (r.ports ?? []).map((p) => Number(p.port))))].sort((a, b) => a - b);
}

function checkContainer(where: string, c: Container): void {
  expect({ where, securityContext: c.securityContext }).toEqual({
    where,
    securityContext: expect.objectContaining({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } }),
  });
  for (const kind of ['requests', 'limits'] as const) {
    expect({ where, kind, cpu: !!c.resources?.[kind]?.cpu, memory: !!c.resources?.[kind]?.memory }).toEqual({ where, kind, cpu: true, memory: true });
  }
}

describe.each(['base', ...OVERLAYS])('Kubernetes security and availability (%s)', (dir) => {
  const objects = dir === 'base' ? render('base') : renderOverlay(dir as (typeof OVERLAYS)[number]);
  const services = landedServices();

  it('every pod runs as non-root with the RuntimeDefault seccomp profile, a read-only root filesystem, no capability, and requests and limits', () => {
    const all = workloads(objects);
    expect(all.length).toBeGreaterThanOrEqual(services.length + 2);
    for (const workload of all) {
      const where = `${workload.kind}/${workload.metadata.name}`;
      const pod = podSpecOf(workload);
      expect({ where, pod: pod.securityContext }).toEqual({ where, pod: expect.objectContaining({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }) });
      expect({ where, automount: pod.automountServiceAccountToken }).toEqual({ where, automount: false });
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) checkContainer(`${where}/${c.name}`, c);
    }
  });

  it('each service has a Deployment with startup, liveness (/health/live) and readiness (/health/ready) probes on its port', () => {
    for (const name of services) {
      const deployment = named(objects, 'Deployment', name) as K8sObject;
      expect({ name, deployment: !!deployment }).toEqual({ name, deployment: true });
      const [container] = podSpecOf(deployment).containers;
      expect(container.ports).toEqual([{ name: 'http', containerPort: SERVICES[name].port }]);
      expect(container.startupProbe?.httpGet).toEqual({ path: '/health/live', port: 'http' });
      expect(container.livenessProbe?.httpGet).toEqual({ path: '/health/live', port: 'http' });
      expect(container.readinessProbe?.httpGet).toEqual({ path: '/health/ready', port: 'http' });
      const port = container.env?.find((e) => e.name === 'PORT')?.value;
      expect({ name, PORT: port }).toEqual({ name, PORT: String(SERVICES[name].port) });
      expect(container.args).toEqual(['serve']);
    }
  });

  it('each service has a Service, an autoscaling/v2 HorizontalPodAutoscaler and a PodDisruptionBudget that select its pods', () => {
    for (const name of services) {
      const deployment = named(objects, 'Deployment', name) as K8sObject;
      const labels = podLabelsOf(deployment);
      const service = named(objects, 'Service', name);
      expect({ name, service: !!service }).toEqual({ name, service: true });
      expect(matches({ matchLabels: (service?.spec as { selector: Record<string, string> }).selector }, labels)).toBe(true);
      const hpa = named(objects, 'HorizontalPodAutoscaler', name);
      expect({ name, hpa: hpa?.apiVersion }).toEqual({ name, hpa: 'autoscaling/v2' });
      const hpaSpec = hpa?.spec as { scaleTargetRef: { kind: string; name: string }; minReplicas: number; maxReplicas: number };
      expect(hpaSpec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name });
      expect(hpaSpec.maxReplicas).toBeGreaterThan(hpaSpec.minReplicas);
      const pdb = named(objects, 'PodDisruptionBudget', name);
      expect({ name, pdb: pdb?.apiVersion }).toEqual({ name, pdb: 'policy/v1' });
      expect(matches((pdb?.spec as { selector: { matchLabels: Record<string, string> } }).selector, labels)).toBe(true);
    }
  });

  it('denies all traffic by default and lets every pod resolve names', () => {
    const policies = ofKind(objects, 'NetworkPolicy').map(policySpec);
    const denyAll = policies.find((p) => Object.keys(p.podSelector.matchLabels ?? {}).length === 0 && !p.ingress && !p.egress);
    expect(denyAll?.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
    const dns = policies.find((p) => Object.keys(p.podSelector.matchLabels ?? {}).length === 0 && p.egress);
    expect(dns?.egress?.[0].to?.[0]).toEqual({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } });
    expect(ports(dns?.egress)).toEqual([53]);
  });

  it('lets each service receive only from the ingress controller, Prometheus and its callers, and send only to what it reads', () => {
    const callersOf = (target: string) => services.filter((caller) => dependenciesOf(envSpecOf(caller)).peers.some((peer) => peer === target));
    for (const name of services) {
      const labels = podLabelsOf(named(objects, 'Deployment', name) as K8sObject);
      const own = policiesFor(objects, labels).filter((p) => Object.keys(p.podSelector.matchLabels ?? {}).length > 0);
      expect({ name, policies: own.length }).toEqual({ name, policies: 1 });
      const [policy] = own;
      expect(policy.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
      expect(ports(policy.ingress)).toEqual([SERVICES[name].port]);
      const from = (policy.ingress ?? []).flatMap((r) => r.from ?? []);
      expect(from.map((f) => f.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name']).filter(Boolean).sort()).toEqual(['ingress-nginx', 'monitoring']);
      expect({ name, callers: from.map((f) => f.podSelector?.matchLabels?.['app.kubernetes.io/name']).filter(Boolean).sort() }).toEqual({ name, callers: callersOf(name).sort() });
      const deps = dependenciesOf(envSpecOf(name));
      const infra = (Object.keys(INFRA_PORTS) as (keyof typeof INFRA_PORTS)[]).filter((k) => deps[k]).map((k) => INFRA_PORTS[k]);
      const needed = [...new Set([...infra, ...deps.peers.map((p) => SERVICES[p].port), ...internetPortsOf(name)])].sort((a, b) => a - b);
      expect({ name, egress: ports(policy.egress) }).toEqual({ name, egress: needed });
      // A service is reached through a pod selector, never through an open port.
      for (const peer of deps.peers) {
        const rule = (policy.egress ?? []).find((r) => r.to?.some((t) => t.podSelector?.matchLabels?.['app.kubernetes.io/name'] === peer));
        expect({ name, peer, ports: ports(rule ? [rule] : []) }).toEqual({ name, peer, ports: [SERVICES[peer].port] });
      }
    }
  });

  it('lets only the webhook service send to the internet: TCP 443 and 80, to public addresses only', () => {
    const isInternetRule = (rule: PolicyRule) => (rule.to ?? []).some((peer) => peer.ipBlock) || ports([rule]).some((port) => port === 80 || port === 443);
    const internetRule = {
      to: Object.entries(NON_PUBLIC_RANGES).map(([cidr, except]) => ({ ipBlock: { cidr, except: [...except].sort() } })),
      ports: [443, 80],
    };
    for (const policy of ofKind(objects, 'NetworkPolicy')) {
      const name = policy.metadata.name;
      const rules = policySpec(policy).egress ?? [];
      // A rule without ports would open every port of its peers.
      for (const rule of rules) expect({ name, ports: (rule.ports ?? []).length > 0 }).toEqual({ name, ports: true });
      const sending = rules.filter(isInternetRule).map((rule) => ({
        to: (rule.to ?? []).map((peer) => ({ ...peer, ...(peer.ipBlock && { ipBlock: { ...peer.ipBlock, except: [...(peer.ipBlock.except ?? [])].sort() } }) })),
        ports: (rule.ports ?? []).map((p) => (p.protocol === 'TCP' ? Number(p.port) : `${p.protocol} ${p.port}`)),
      }));
      const service = Object.keys(SERVICES).includes(name) ? (name as keyof typeof SERVICES) : undefined;
      const expected = service && internetPortsOf(service).length > 0 ? [internetRule] : [];
      expect({ name, sending }).toEqual({ name, sending: expected });
    }
    // The webhook service's policy exists and says so, whether or not its app has landed yet.
    expect(ofKind(objects, 'NetworkPolicy').filter((p) => policySpec(p).egress?.some(isInternetRule)).map((p) => p.metadata.name)).toEqual(
      (Object.keys(SERVICES) as (keyof typeof SERVICES)[]).filter((s) => internetPortsOf(s).length > 0),
    );
  });

  it('lets each Job reach only the store it works on', () => {
    const expectations: Record<string, number[]> = { 'kafka-topic-job': [INFRA_PORTS.kafka], 'postgres-bootstrap-job': [INFRA_PORTS.postgres] };
    for (const name of services) if (dependenciesOf(envSpecOf(name)).migrations) expectations[`${name}-migrate`] = [INFRA_PORTS.postgres];
    for (const [job, allowed] of Object.entries(expectations)) {
      const workload = named(objects, 'Job', job) as K8sObject;
      expect({ job, exists: !!workload }).toEqual({ job, exists: true });
      const own = policiesFor(objects, podLabelsOf(workload)).filter((p) => Object.keys(p.podSelector.matchLabels ?? {}).length > 0);
      expect({ job, ingress: own.flatMap((p) => p.ingress ?? []), egress: ports(own.flatMap((p) => p.egress ?? [])) }).toEqual({ job, ingress: [], egress: allowed });
    }
  });
});

describe('setup Jobs', () => {
  const objects = render('base');

  it('the Kafka topic Job creates auth.revocations.v1 (6 partitions, retention of at least 7200000 ms), the compacted domain topic, the audit stream (7 days), webhook endpoints and API key changes (30 days)', () => {
    const job = named(objects, 'Job', 'kafka-topic-job') as K8sObject;
    const script = podSpecOf(job).containers[0].args?.join('\n') ?? '';
    const created = Object.fromEntries(topicCreations(script).map((t) => [t.topic, t]));
    expect(Object.keys(created).sort()).toEqual([API_KEYS_TOPIC, AUDIT_TOPIC, DOMAIN_TOPIC, REVOCATIONS_TOPIC, WEBHOOK_ENDPOINTS_TOPIC].sort());
    expect(created[AUDIT_TOPIC]).toMatchObject({ partitions: 6, configs: { 'cleanup.policy': 'delete', 'retention.ms': '604800000' } });
    expect(created[WEBHOOK_ENDPOINTS_TOPIC]).toMatchObject({ partitions: 6, configs: { 'cleanup.policy': 'delete', 'retention.ms': '2592000000' } });
    expect(created[API_KEYS_TOPIC]).toMatchObject({ partitions: 6, configs: { 'cleanup.policy': 'delete', 'retention.ms': '2592000000' } });
    expect(created[REVOCATIONS_TOPIC].partitions).toBe(6);
    expect(Number(created[REVOCATIONS_TOPIC].configs['retention.ms'])).toBeGreaterThanOrEqual(7200000);
    expect(created[DOMAIN_TOPIC]).toMatchObject({ partitions: 6, configs: { 'cleanup.policy': 'compact' } });
    // As the AsyncAPI document (/api/v1/asyncapi.json) tells subscribers.
    for (const stated of topicsOfAsyncApi()) expect(created[stated.topic] && asStated(created[stated.topic], stated)).toEqual(stated);
    expect(script).toMatch(/--create --if-not-exists/);
    const infraLib = readFileSync(join(ROOT, 'tools/infra/lib.sh'), 'utf8');
    const kafkaVersion = /KAFKA_VERSION="\$\{KAFKA_VERSION:-([0-9.]+)\}"/.exec(infraLib)?.[1];
    expect(podSpecOf(job).containers[0].image).toBe(`apache/kafka:${kafkaVersion}`);
  });

  it('the Postgres bootstrap Job runs the one bootstrap.sql (tools/infra and compose run it too), without dev passwords', () => {
    const bootstrap = 'deploy/k8s/base/platform/postgres/bootstrap.sql';
    expect(readFileSync(join(ROOT, 'tools/infra/lib.sh'), 'utf8')).toContain(`-f "$REPO_ROOT/${bootstrap}"`);
    expect(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')).toContain(`./${bootstrap}:/invoicing/bootstrap.sql:ro`);
    expect(existsSync(join(ROOT, 'tools/infra/postgres/bootstrap.sql'))).toBe(false);
    const job = named(objects, 'Job', 'postgres-bootstrap-job') as K8sObject;
    const script = podSpecOf(job).containers[0].args?.join('\n') ?? '';
    expect(script).toMatch(/-v dev_passwords=false -f \/bootstrap\/bootstrap\.sql/);
    expect(script).toMatch(/set-passwords\.sh/);
    const configMap = generated(objects, 'ConfigMap', 'postgres-bootstrap');
    expect(Object.keys((configMap?.data as Record<string, string>) ?? {}).sort()).toEqual(['bootstrap.sql', 'set-passwords.sh']);
  });

  it('bootstrap.sql creates the roles and schema of exactly the services with a database (its one list, `services`)', () => {
    const sql = readFileSync(join(ROOT, 'deploy/k8s/base/platform/postgres/bootstrap.sql'), 'utf8');
    const list = /FROM \(VALUES\n([\s\S]*?)\n\) AS service\(svc, sch\) \\gset/.exec(sql)?.[1] ?? '';
    const rows = [...list.matchAll(/\('([a-z_]+)', '([a-z_]+)'\)/g)].map(([, svc, sch]) => `${svc}:${sch}`);
    const withDatabase = landedServices().filter((n) => databaseOf(n));
    expect(rows.sort()).toEqual(withDatabase.map((n) => `${databaseOf(n)?.stem}:${databaseOf(n)?.schema}`).sort());
    const withSchema = landedServices().filter((n) => dependenciesOf(envSpecOf(n)).migrations);
    expect(withSchema.sort()).toEqual(withDatabase.sort());
  });

  it('the Postgres bootstrap Job sets the password of every service role from that service\u2019s own Secret', () => {
    const job = named(objects, 'Job', 'postgres-bootstrap-job') as K8sObject;
    const env = podSpecOf(job).containers[0].env ?? [];
    for (const name of landedServices().filter((n) => dependenciesOf(envSpecOf(n)).migrations)) {
      for (const key of ['DATABASE_URL', 'MIGRATION_DATABASE_URL']) {
        const variable = env.find((e) => e.valueFrom?.secretKeyRef?.name === `${name}-database` && e.valueFrom.secretKeyRef.key === key);
        expect({ name, key, passed: variable?.name }).toEqual({ name, key, passed: expect.stringMatching(/DATABASE_URL$/) });
      }
    }
  });
});
