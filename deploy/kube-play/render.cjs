#!/usr/bin/env node
// Turns `kubectl kustomize deploy/k8s/overlays/dev` into what `podman kube play` (4.3) can run, and
// says what it cannot:
//
//   node deploy/kube-play/render.cjs RENDERED.yaml OUT_DIR SUBNET_PREFIX     (e.g. 10.89.77)
//
// kube play knows Pods, Deployments and ConfigMaps, and reads secretKeyRef from podman secrets that
// hold a Kubernetes Secret. It has no Services (no cluster DNS), no Jobs, no Ingress. So:
//   - Deployments stay Deployments, each played with a fixed address; every Service becomes a
//     hostAliases entry (its name → the address of the Deployment it selects), added to every pod:
//     what cluster DNS would answer, for exactly the Services of the manifests;
//   - each Job becomes a Pod with the Job's pod template (restartPolicy Never: play.sh waits for it);
//   - ConfigMaps go into every pod's file, each Secret's data to a file for `podman secret create`;
//   - the Ingress's routes become a gateway pod, since kube play cannot route: the nginx image of
//     docker-compose.yml's gateway with the configuration libs/gateway renders for this network
//     (`cli.ts render --upstreams named`: each service as <Service name>:<port>, which the host
//     aliases answer), in a ConfigMap of its own; render.cjs fails unless its upstreams are exactly
//     the Ingress's backends (Service name and port);
//   - emptyDir volumes are renamed per pod (see asPlayed);
//   - Postgres, Redis and Kafka (external to the manifests: "reachable as postgres, redis and kafka
//     in the namespace") come from infra.yaml, with the same aliases.
// OUT_DIR/plan.tsv lists, in play order: `KIND NAME IP FILE [PROBE_PATH PROBE_PORT]`; the kinds
// kube play would ignore are printed, counted, on stderr.
'use strict';
const { execFileSync } = require('node:child_process');
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, resolve } = require('node:path');
const YAML = require('yaml');

const [input, outDir, subnet] = process.argv.slice(2);
if (!input || !outDir || !/^\d+\.\d+\.\d+$/.test(subnet ?? '')) {
  console.error('usage: render.cjs RENDERED.yaml OUT_DIR SUBNET_PREFIX (three octets)');
  process.exit(64);
}
const docs = YAML.parseAllDocuments(readFileSync(input, 'utf8'))
  .map((d) => d.toJSON())
  .filter(Boolean);
const infra = YAML.parseAllDocuments(readFileSync(join(__dirname, 'infra.yaml'), 'utf8')).map((d) => d.toJSON());
const root = resolve(__dirname, '..', '..');
const compose = YAML.parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
const of = (kind) => docs.filter((d) => d.kind === kind);
const strip = (meta) => ({ name: meta.name, labels: meta.labels, annotations: meta.annotations });
for (const dir of ['secrets', 'pods']) mkdirSync(join(outDir, dir), { recursive: true });

// Addresses: infra .10-.19, Deployments .20-.39, the gateway .40; Jobs get whatever is free.
const address = new Map();
infra.forEach((pod, i) => address.set(pod.metadata.name, `${subnet}.${10 + i}`));
const deployments = of('Deployment');
deployments.forEach((d, i) => address.set(d.metadata.name, `${subnet}.${20 + i}`));
const GATEWAY_IP = `${subnet}.40`;

// Service name → address of the one Deployment its selector matches.
const aliases = infra.map((pod) => ({ ip: address.get(pod.metadata.name), hostnames: [pod.metadata.name] }));
const servicePorts = new Map();
for (const service of of('Service')) {
  const selector = Object.entries(service.spec.selector ?? {});
  const matching = deployments.filter((d) => selector.every(([k, v]) => d.spec.template.metadata.labels?.[k] === v));
  if (matching.length !== 1) throw new Error(`Service ${service.metadata.name} selects ${matching.length} Deployments`);
  aliases.push({ ip: address.get(matching[0].metadata.name), hostnames: [service.metadata.name] });
  servicePorts.set(service.metadata.name, service.spec.ports[0].port);
}

/**
 * The pod spec as played: the Services' host aliases added, and each emptyDir volume renamed after
 * its pod. podman 4.3 turns an emptyDir into a volume named like the pod's volume, so every pod's
 * `tmp` would be one volume shared by all pods; on Kubernetes an emptyDir belongs to its pod alone.
 */
function asPlayed(podName, podSpec) {
  const renamed = new Map((podSpec.volumes ?? []).filter((v) => v.emptyDir).map((v) => [v.name, `${podName}-${v.name}`]));
  const rename = (name) => renamed.get(name) ?? name;
  const containers = (list) =>
    list?.map((c) => ({ ...c, volumeMounts: c.volumeMounts?.map((m) => ({ ...m, name: rename(m.name) })) }));
  return {
    ...podSpec,
    hostAliases: [...(podSpec.hostAliases ?? []), ...aliases],
    volumes: podSpec.volumes?.map((v) => ({ ...v, name: rename(v.name) })),
    containers: containers(podSpec.containers),
    ...(podSpec.initContainers ? { initContainers: containers(podSpec.initContainers) } : {}),
  };
}
const plan = [];
function write(kind, name, ip, doc, probe = [], configMaps = []) {
  const file = join(outDir, 'pods', `${name}.yaml`);
  // The ConfigMaps travel with every pod: kube play mounts a configMap volume only from a ConfigMap
  // in the same file (its --configmap option feeds environment variables only).
  writeFileSync(file, [...of('ConfigMap'), ...configMaps, doc].map((d) => YAML.stringify(d)).join('---\n'));
  plan.push([kind, name, ip ?? '-', resolve(file), ...probe].join('\t'));
}

for (const pod of infra) write('infra', pod.metadata.name, address.get(pod.metadata.name), { ...pod, spec: asPlayed(pod.metadata.name, pod.spec) });

// Jobs in the order a cluster's would succeed: the database roles, then schemas and topics.
const jobRank = (job) => (job.metadata.name.startsWith('postgres-bootstrap') ? 0 : 1);
for (const job of of('Job').sort((a, b) => jobRank(a) - jobRank(b) || a.metadata.name.localeCompare(b.metadata.name))) {
  const template = job.spec.template;
  write('job', job.metadata.name, undefined, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: strip({ ...template.metadata, name: job.metadata.name }),
    spec: asPlayed(job.metadata.name, { ...template.spec, restartPolicy: 'Never' }),
  });
}

for (const deployment of deployments) {
  const container = deployment.spec.template.spec.containers[0];
  const probe = container.readinessProbe?.httpGet;
  if (!probe) throw new Error(`Deployment ${deployment.metadata.name} has no HTTP readiness probe`);
  const port = typeof probe.port === 'number' ? probe.port : container.ports.find((p) => p.name === probe.port).containerPort;
  write('deployment', deployment.metadata.name, address.get(deployment.metadata.name), {
    ...deployment,
    metadata: strip(deployment.metadata),
    spec: { ...deployment.spec, template: { ...deployment.spec.template, spec: asPlayed(deployment.metadata.name, deployment.spec.template.spec) } },
  }, [probe.path, port]);
}

// The Ingress's backends, as `name:port`: what the gateway's upstreams must be.
const backends = new Set();
for (const ingress of of('Ingress')) {
  for (const rule of ingress.spec.rules ?? []) {
    for (const path of rule.http?.paths ?? []) {
      const { name, port } = path.backend.service;
      backends.add(`${name}:${port.number ?? servicePorts.get(name)}`);
    }
  }
}
// The gateway's nginx.conf for this network, rendered by libs/gateway: every service by its name
// (the Services' host aliases), the pod's emptyDir /tmp as its runtime folder, logs to stdout/stderr.
const GATEWAY_CONF_DIR = '/etc/nginx/gateway';
const nginxConf = execFileSync(
  join(root, 'node_modules/.bin/tsx'),
  ['--tsconfig', 'libs/gateway/tsconfig.spec.json', 'libs/gateway/src/cli.ts', 'render', '--upstreams', 'named', '--listen', '8080',
    '--status-listen', '127.0.0.1:9080', '--runtime-dir', '/tmp', '--access-log', '/dev/stdout', '--error-log', 'stderr', '--workers', 'auto'],
  { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
);
const upstreams = new Set([...nginxConf.matchAll(/^ {4}server (\S+) /gm)].map((m) => m[1]));
const missing = [...backends].filter((b) => !upstreams.has(b));
const extra = [...upstreams].filter((u) => !backends.has(u));
if (missing.length || extra.length) {
  throw new Error(`the gateway's upstreams differ from the Ingress's backends: not in the gateway ${missing.join(', ') || '-'}; not in the Ingress ${extra.join(', ') || '-'}`);
}
const gatewayService = compose.services?.gateway;
if (!gatewayService?.image) throw new Error("docker-compose.yml's gateway service names no image");
const gatewayConfig = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'gateway-nginx', labels: { 'app.kubernetes.io/name': 'gateway', 'app.kubernetes.io/part-of': 'invoicing' } },
  data: { 'nginx.conf': nginxConf },
};
write('gateway', 'gateway', GATEWAY_IP, {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'gateway', labels: { 'app.kubernetes.io/name': 'gateway', 'app.kubernetes.io/part-of': 'invoicing' } },
  spec: asPlayed('gateway', {
    // As compose runs it (user 1000:1000, read-only root, no capability), nginx itself as the command.
    securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 },
    containers: [
      {
        name: 'gateway',
        image: gatewayService.image,
        command: ['nginx', '-e', 'stderr', '-c', `${GATEWAY_CONF_DIR}/nginx.conf`, '-g', 'daemon off;'],
        ports: [{ name: 'http', containerPort: 8080 }],
        readinessProbe: { httpGet: { path: '/health/ready', port: 'http' } },
        volumeMounts: [
          { name: 'config', mountPath: GATEWAY_CONF_DIR, readOnly: true },
          { name: 'tmp', mountPath: '/tmp' },
        ],
        securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      },
    ],
    volumes: [
      { name: 'config', configMap: { name: gatewayConfig.metadata.name } },
      { name: 'tmp', emptyDir: {} },
    ],
  }),
}, ['/health/ready', 8080], [gatewayConfig]);

// What podman 4.3's secretKeyRef reads: a podman secret whose content is the Secret's `data` as a JSON
// object (values base64, as in the Secret); a whole Secret, YAML or JSON, is refused.
for (const secret of of('Secret')) {
  const data = { ...secret.data };
  for (const [key, value] of Object.entries(secret.stringData ?? {})) data[key] = Buffer.from(value).toString('base64');
  writeFileSync(join(outDir, 'secrets', `${secret.metadata.name}.json`), JSON.stringify(data));
}
writeFileSync(join(outDir, 'plan.tsv'), plan.join('\n') + '\n');

const played = new Set(['Deployment', 'Job', 'ConfigMap', 'Secret']);
const ignored = {};
for (const d of docs) if (!played.has(d.kind)) ignored[d.kind] = (ignored[d.kind] ?? 0) + 1;
console.error(
  `rendered: ${deployments.length} Deployments, ${of('Job').length} Jobs (as Pods), ${of('ConfigMap').length} ConfigMaps, ${of('Secret').length} Secrets; ` +
    `Services as host aliases (${of('Service').length}), the Ingress as an nginx gateway pod (${gatewayService.image}, ${upstreams.size} upstreams rendered by libs/gateway); ` +
    `not played (validated offline only, deploy/tests): ${Object.entries(ignored).map(([k, n]) => `${n} ${k}`).join(', ')}`,
);
