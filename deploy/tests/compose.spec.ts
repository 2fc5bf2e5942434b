import { API_KEYS_TOPIC, AUDIT_TOPIC, buildAsyncApiDocument, DOMAIN_TOPIC, REVOCATIONS_TOPIC, SERVICES, WEBHOOK_ENDPOINTS_TOPIC } from '@invoicing/contracts';
import Ajv from 'ajv';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { appOf, ComposeFile, environmentOf, isMigration, loadCompose } from './support/compose';
import { asStated, topicCreations, topicsOfAsyncApi } from './support/topics';
import { connectionVariables, dependenciesOf, envSpecOf, landedServices, peerVariable, ROOT } from './support/platform';

const schema = JSON.parse(readFileSync(join(__dirname, 'schemas/compose-spec.json'), 'utf8')) as Record<string, unknown>;

/** The kafka-topics one-shot's script: the file docker-compose.yml mounts into it and runs. */
function topicScript(topics: { command?: string | string[] }): string {
  expect(topics.command).toEqual(['/invoicing/kafka-topics.sh']);
  return readFileSync(join(ROOT, 'deploy/compose/kafka-topics.sh'), 'utf8');
}

function validator() {
  // The compose schema is draft-07 (the Ajv default); `strict: false` because it uses keywords such
  // as "deprecated" that Ajv's strict mode does not know.
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  // The file names its meta-schema with https and no fragment; Ajv knows draft-07 by its http id.
  ajv.addMetaSchema({ ...draft07, $id: 'https://json-schema.org/draft-07/schema' });
  return ajv.compile(schema);
}

describe('docker-compose.yml', () => {
  const compose = loadCompose();
  const validate = validator();

  it('is valid against the Compose Specification schema', () => {
    const valid = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('the schema check is live: a misspelt key or a bad condition is refused', () => {
    const broken = structuredClone(compose) as ComposeFile & { services: Record<string, Record<string, unknown>> };
    broken.services.gateway.helthcheck = { test: ['CMD', 'true'] };
    expect(validate(broken)).toBe(false);
    const badCondition = structuredClone(compose);
    badCondition.services.gateway.depends_on = { redis: { condition: 'service_ready' } };
    expect(validate(badCondition)).toBe(false);
  });

  it('runs Postgres 16 with the bootstrap SQL, Redis 7 and the apache/kafka image of tools/infra (KRaft)', () => {
    expect(compose.services.postgres.image).toBe('postgres:16');
    const infraLib = readFileSync(join(ROOT, 'tools/infra/lib.sh'), 'utf8');
    const kafkaVersion = /KAFKA_VERSION="\$\{KAFKA_VERSION:-([0-9.]+)\}"/.exec(infraLib)?.[1];
    expect(kafkaVersion).toBeDefined();
    expect(compose.services.kafka.image).toBe(`apache/kafka:${kafkaVersion}`);
    expect(environmentOf(compose.services.kafka)).toMatchObject({ KAFKA_PROCESS_ROLES: 'broker,controller', KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false' });
    expect(compose.services.redis.image).toBe('redis:7');
    const init = readFileSync(join(ROOT, 'deploy/compose/postgres-init.sh'), 'utf8');
    expect(init).toMatch(/-v dbname=invoicing/);
    expect(init).toMatch(/-v dev_passwords=true/);
    expect(JSON.stringify(compose.services.postgres)).toContain('./deploy/k8s/base/platform/postgres/bootstrap.sql:/invoicing/bootstrap.sql');
  });

  it('creates the topics once Kafka is healthy: revocations (6 partitions, at least 2 h), domain events (6, compacted), the audit stream (6, 7 days), webhook endpoints and API key changes (6, 30 days)', () => {
    const topics = compose.services['kafka-topics'];
    const script = topicScript(topics);
    const created = Object.fromEntries(topicCreations(script).map((t) => [t.topic, t]));
    expect(Object.keys(created).sort()).toEqual([API_KEYS_TOPIC, AUDIT_TOPIC, DOMAIN_TOPIC, REVOCATIONS_TOPIC, WEBHOOK_ENDPOINTS_TOPIC].sort());
    expect(created[AUDIT_TOPIC]).toMatchObject({ partitions: 6, configs: { 'cleanup.policy': 'delete', 'retention.ms': '604800000' } });
    expect(created[WEBHOOK_ENDPOINTS_TOPIC]).toMatchObject({ partitions: 6, configs: { 'cleanup.policy': 'delete', 'retention.ms': '2592000000' } });
    expect(created[API_KEYS_TOPIC]).toMatchObject({ partitions: 6, configs: { 'cleanup.policy': 'delete', 'retention.ms': '2592000000' } });
    expect(created[REVOCATIONS_TOPIC].partitions).toBe(6);
    expect(Number(created[REVOCATIONS_TOPIC].configs['retention.ms'])).toBeGreaterThanOrEqual(2 * 3600 * 1000);
    expect(created[DOMAIN_TOPIC]).toMatchObject({ partitions: 6, configs: { 'cleanup.policy': 'compact' } });
    expect(script).toMatch(/--if-not-exists/);
    // Every creation goes through the script's retry (podman's DNS once missed `kafka` between two).
    const calls = script.split('\n').filter((line) => line.includes('/opt/kafka/bin/kafka-topics.sh'));
    expect(calls.length).toBe(5);
    for (const line of calls) expect(line).toMatch(/^retry \/opt\/kafka\/bin\/kafka-topics\.sh /);
    expect(topics.volumes).toContain('./deploy/compose/kafka-topics.sh:/invoicing/kafka-topics.sh:ro');
    expect(topics.depends_on).toEqual({ kafka: { condition: 'service_healthy' } });
    expect(topics.restart).toBe('no');
  });

  it('creates each topic as the AsyncAPI document (/api/v1/asyncapi.json) tells subscribers, and serves its example server', () => {
    const topics = compose.services['kafka-topics'];
    const script = topicScript(topics);
    const created = Object.fromEntries(topicCreations(script).map((t) => [t.topic, t]));
    for (const stated of topicsOfAsyncApi()) expect(created[stated.topic] && asStated(created[stated.topic], stated)).toEqual(stated);
    // Its "compose" server, localhost:9094: the EXTERNAL listener, published on the host's loopback only.
    const server = (buildAsyncApiDocument() as { servers: { compose: { host: string } } }).servers.compose.host;
    expect(environmentOf(compose.services.kafka).KAFKA_ADVERTISED_LISTENERS).toContain(`EXTERNAL://${server}`);
    expect(compose.services.kafka.ports).toContain(`127.0.0.1:${server.split(':')[1]}:${server.split(':')[1]}`);
  });

  it('has every landed service, built from the Dockerfile with its APP and PORT, and the gateway on 8080', () => {
    for (const name of landedServices()) {
      const service = compose.services[name];
      expect({ name, present: !!service }).toEqual({ name, present: true });
      expect(service.build).toEqual({ context: '.', args: { APP: name, PORT: String(SERVICES[name].port) } });
    }
    // Only the platform's services are built; nothing builds an image of its own for the gateway.
    const built = Object.entries(compose.services).filter(([, s]) => s.build).map(([, s]) => appOf(s));
    expect([...new Set(built)].sort()).toEqual([...landedServices()].sort());
    expect(compose.services.gateway.ports).toEqual(['8080:8080']);
    // Only the gateway and Kafka's host listener are published: no service is reached but through the gateway.
    const published = Object.entries(compose.services).filter(([, s]) => s.ports?.length).map(([n]) => n);
    expect(published.sort()).toEqual(['gateway', 'kafka']);
  });

  it("publishes a Kafka listener to the host's loopback only, advertised at the address the host reaches, the services staying on kafka:9092", () => {
    const kafka = compose.services.kafka;
    const env = environmentOf(kafka);
    const listeners = (value: string) => Object.fromEntries(value.split(',').map((l) => /^([A-Z_]+):\/\/(.*)$/.exec(l.trim())?.slice(1, 3) ?? [l, '']));
    const bound = listeners(env.KAFKA_LISTENERS);
    const advertised = listeners(env.KAFKA_ADVERTISED_LISTENERS);
    const protocols = Object.fromEntries(env.KAFKA_LISTENER_SECURITY_PROTOCOL_MAP.split(',').map((p) => p.split(':')));
    // Every listener has a protocol; the inside one, the controller's and the health check are unchanged.
    expect(Object.keys(protocols).sort()).toEqual(Object.keys(bound).sort());
    expect(bound).toEqual({ PLAINTEXT: ':9092', CONTROLLER: ':9093', EXTERNAL: ':9094' });
    expect(advertised).toEqual({ PLAINTEXT: 'kafka:9092', EXTERNAL: 'localhost:9094' });
    expect(env.KAFKA_INTER_BROKER_LISTENER_NAME).toBe('PLAINTEXT');
    expect(JSON.stringify(kafka.healthcheck?.test)).toContain('--bootstrap-server localhost:9092');
    // Published on 127.0.0.1 only (never every address: the listener is plaintext, unauthenticated),
    // on the port it is advertised at, to the port it listens on.
    expect(kafka.ports).toHaveLength(1);
    const [hostIp, hostPort, containerPort] = (kafka.ports ?? [''])[0].split(':');
    expect(hostIp).toBe('127.0.0.1');
    expect(`localhost:${hostPort}`).toBe(advertised.EXTERNAL);
    expect(`:${containerPort}`).toBe(bound.EXTERNAL);
    // The topic job and every service use the inside listener.
    const topics = compose.services['kafka-topics'];
    const script = topicScript(topics);
    expect(new Set([...script.matchAll(/--bootstrap-server (\S+)/g)].map((m) => m[1]))).toEqual(new Set(['kafka:9092']));
    for (const name of landedServices()) {
      const brokers = environmentOf(compose.services[name]).KAFKA_BROKERS;
      if (brokers !== undefined) expect({ name, brokers }).toEqual({ name, brokers: 'kafka:9092' });
    }
  });

  it('runs a one-shot migration per service with a schema, before the service starts', () => {
    for (const name of landedServices()) {
      const deps = dependenciesOf(envSpecOf(name));
      const migrate = compose.services[`${name}-migrate`];
      if (!deps.migrations) {
        expect({ name, migrate }).toEqual({ name, migrate: undefined });
        continue;
      }
      expect({ name, migrate: !!migrate }).toEqual({ name, migrate: true });
      expect(isMigration(migrate)).toBe(true);
      expect(appOf(migrate)).toBe(name);
      expect(migrate.restart).toBe('no');
      expect(migrate.depends_on?.postgres).toEqual({ condition: 'service_healthy' });
      expect(compose.services[name].depends_on?.[`${name}-migrate`]).toEqual({ condition: 'service_completed_successfully' });
    }
  });

  it('sets every connection variable (database, Redis, Kafka, other services) to a compose host', () => {
    for (const name of landedServices()) {
      const spec = envSpecOf(name);
      const env = environmentOf(compose.services[name]);
      // The schema owner's URL is only used by the one-shot migration (and only required in production).
      for (const variable of connectionVariables(spec).filter((v) => v !== 'MIGRATION_DATABASE_URL')) {
        expect({ name, variable, set: variable in env }).toEqual({ name, variable, set: true });
      }
      for (const peer of dependenciesOf(spec).peers) {
        expect({ name, peer, url: env[peerVariable(peer)] }).toEqual({ name, peer, url: `http://${peer}:${SERVICES[peer].port}` });
      }
      const migrate = compose.services[`${name}-migrate`];
      if (migrate) expect(environmentOf(migrate).MIGRATION_DATABASE_URL).toMatch(/@postgres:5432\//);
    }
  });

  it('starts in order: each dependency is waited for by health or completion, and each has a health check', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        const target = compose.services[dependency];
        expect({ name, dependency, exists: !!target }).toEqual({ name, dependency, exists: true });
        expect(['service_healthy', 'service_completed_successfully']).toContain(condition);
        if (condition === 'service_healthy') expect({ dependency, healthcheck: !!target.healthcheck }).toEqual({ dependency, healthcheck: true });
        else expect({ dependency, restart: target.restart }).toEqual({ dependency, restart: 'no' });
      }
    }
    for (const name of landedServices()) {
      const deps = dependenciesOf(envSpecOf(name));
      const dependsOn = compose.services[name].depends_on ?? {};
      if (deps.kafka) expect({ name, topic: dependsOn['kafka-topics'] }).toEqual({ name, topic: { condition: 'service_completed_successfully' } });
      if (deps.redis) expect({ name, redis: dependsOn.redis }).toEqual({ name, redis: { condition: 'service_healthy' } });
      expect(compose.services.gateway.depends_on?.[name]).toEqual({ condition: 'service_healthy' });
    }
  });

  it('runs the gateway as the official nginx image (Debian), nginx itself as the entry point, as uid 1000', () => {
    const gateway = compose.services.gateway;
    expect(gateway.build).toBeUndefined();
    expect(gateway.image).toMatch(/^nginx:1\.\d+-bookworm$/);
    expect(gateway.user).toBe('1000:1000');
    // Not the image's /docker-entrypoint.sh, whose scripts write to /etc/nginx (read-only here).
    expect(gateway.entrypoint).toEqual(['nginx', '-e', 'stderr', '-c', '/etc/nginx/gateway.conf', '-g', 'daemon off;']);
    expect(gateway.command).toBeUndefined();
    expect(gateway.stop_signal).toBe('SIGQUIT');
    // Health on the gateway's own readiness answer, with the curl the official Debian image carries.
    expect(JSON.stringify(gateway.healthcheck?.test)).toMatch(/curl [^"]*http:\/\/127\.0\.0\.1:8080\/health\/ready/);
    expect(Object.keys(gateway.depends_on ?? {}).sort()).toEqual([...landedServices()].sort());
  });

  it('checks readiness (not just liveness) of every app container and the gateway, and hardens them', () => {
    const gateway = compose.services.gateway;
    expect({ read_only: gateway.read_only, cap_drop: gateway.cap_drop, init: gateway.init, tmpfs: gateway.tmpfs, security_opt: gateway.security_opt }).toEqual({
      read_only: true,
      cap_drop: ['ALL'],
      init: true,
      tmpfs: ['/tmp'],
      security_opt: ['no-new-privileges:true'],
    });
    for (const [name, service] of Object.entries(compose.services)) {
      if (!appOf(service)) continue;
      expect({ name, read_only: service.read_only, cap_drop: service.cap_drop }).toEqual({ name, read_only: true, cap_drop: ['ALL'] });
      if (isMigration(service)) continue;
      expect({ name, check: JSON.stringify(service.healthcheck?.test) }).toEqual({ name, check: expect.stringContaining('/health/ready') });
    }
  });
});
