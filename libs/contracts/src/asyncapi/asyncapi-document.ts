import { ACCESS_TOKEN_TTL_SECONDS } from '../access-token';
import { API_KEY_EVENT_SCHEMAS, API_KEYS_TOPIC } from '../events/api-key-events';
import { AUDIT_EVENT_SCHEMA, AUDIT_EVENT_TYPES, AUDIT_EVENT_V1, AUDIT_TOPIC } from '../events/audit-events';
import { DOMAIN_TOPIC, DOMAIN_TOPIC_EVENT_SCHEMAS } from '../events/domain-events';
import { REVOCATION_EVENT_SCHEMAS, REVOCATIONS_TOPIC } from '../events/revocation-events';
import { WEBHOOK_ENDPOINT_EVENT_SCHEMAS, WEBHOOK_ENDPOINTS_TOPIC } from '../events/webhook-endpoint-events';
import { eventExamples } from './event-examples';

/**
 * The AsyncAPI 3.0 document of every topic the platform publishes and every event type on it,
 * generated from the same contracts as the JSON Schemas the publishers validate each event with
 * (REVOCATION_EVENT_SCHEMAS, DOMAIN_TOPIC_EVENT_SCHEMAS, AUDIT_EVENT_SCHEMA,
 * WEBHOOK_ENDPOINT_EVENT_SCHEMAS, API_KEY_EVENT_SCHEMAS), so it cannot drift from
 * what is sent. Served at /api/v1/asyncapi.json beside the OpenAPI document, and rendered at
 * /api/v1/docs/events.
 *
 * **Point of view.** An AsyncAPI 3 document describes one application, and its operations say what
 * that application does: this one describes the platform, which *sends* on every topic, so every
 * operation is `action: send`. A subscriber receives what the platform sends; a document of the
 * subscriber's own would list the same channels and messages with `receive`. (The platform's own
 * services consume these topics too; that is internal and not described.)
 *
 * **Payload schemas.** The contracts' schemas are JSON Schema draft 2020-12. AsyncAPI parsers read
 * the AsyncAPI Schema format (a superset of draft-07) and, of JSON Schema, draft-07 only. The
 * schemas use only keywords that mean the same in both drafts (asyncapi-document.spec.ts refuses
 * any other), so each payload is its contract's schema without `$schema` and `$id`, in the default
 * AsyncAPI Schema format. The files in libs/contracts/src/events/schemas stay the reference.
 */

/** Kafka topic settings as the platform's setup creates them (docker-compose.yml, the Kubernetes topic Job, tools/infra). */
interface TopicSettings {
  partitions: number;
  'cleanup.policy': Array<'delete' | 'compact'>;
  'retention.ms'?: number;
}

interface TopicDescription {
  topic: string;
  title: string;
  description: string;
  settings: TopicSettings;
  /** What a subscriber does, for the operation's description. */
  subscribing: string;
  /** CloudEvents `type` → its JSON Schema. */
  events: Array<[string, Record<string, unknown>]>;
  /** The message key's JSON Schema, from the event's schema (the key is always the event's subject). */
  keyOf(schema: EventSchema): Record<string, unknown>;
  keyDescription: string;
}

type EventSchema = Record<string, unknown> & {
  title?: string;
  description?: string;
  properties: Record<string, Record<string, unknown>> & { data: { properties: Record<string, Record<string, unknown>> } };
};

const REPLAY_MINUTES = ACCESS_TOKEN_TTL_SECONDS / 60 + 5;

const TOPICS: TopicDescription[] = [
  {
    topic: REVOCATIONS_TOPIC,
    title: 'Revocations and key changes',
    description:
      'Every revocation of sessions or of an API key, and the other changes to a key that token verifiers and the key owner\'s systems act on: a new IP allowlist, and the notice that a key is about to expire. ' +
      'A service that accepts the platform\'s access tokens must apply these events to refuse revoked tokens before they expire (docs/api.md section 6). ' +
      'A revocation of many sessions may come as several events, each listing part of them. ' +
      'The list of types is open: skip a type you do not know (without stopping or failing readiness), and treat `data.reason` as informative and its list as open.',
    settings: { partitions: 6, 'cleanup.policy': ['delete'], 'retention.ms': 2 * 3600 * 1000 },
    subscribing:
      `One consumer group per instance (e.g. \`<service>.<hostname>.<pid>\`), so that every instance sees every event; do not rely on committed offsets. ` +
      `On start, seek to now minus ${REPLAY_MINUTES} minutes (the access-token lifetime plus 5 minutes of clock skew; Kafka offsets by timestamp) and report ready once caught up with the end offsets. ` +
      'Validate each event against the schema of its type, skip unknown types, and apply an event twice without harm. In Node, `@invoicing/auth-guard` does all of this.',
    events: Object.entries(REVOCATION_EVENT_SCHEMAS) as Array<[string, Record<string, unknown>]>,
    keyOf: (schema) => schema.properties.subject,
    keyDescription: 'The API key id (`key_...`), also the event\'s `subject`: one key\'s events go to one partition.',
  },
  {
    topic: DOMAIN_TOPIC,
    title: 'Domain events',
    description:
      'Every object created through the public API, exactly as the API returned it, so that services keep local read models of the objects they reference; ' +
      'and every change of an organization\'s profile (Settings → Organization: legal name, address, VAT id, billing email, IBAN, BIC, payment terms), the whole profile with its version, keyed by the organization id (ADR 0039). ' +
      'Compacted: the latest event of every key stays (the platform writes no tombstones), so a new subscriber reads the topic from the beginning to build its read model. ' +
      'The list of types is open: skip a type you do not know.',
    settings: { partitions: 6, 'cleanup.policy': ['compact'] },
    subscribing:
      'One consumer group per subscribing service (its instances share the work); start from the earliest offset the first time. Validate each event against the schema of its type, skip unknown types, and apply an event twice without harm (key your read model by the object id).',
    events: Object.entries(DOMAIN_TOPIC_EVENT_SCHEMAS) as Array<[string, Record<string, unknown>]>,
    // An object's event is keyed by the object's id; a profile change's schema states its key (the organization id) as its subject.
    keyOf: (schema) => (schema.properties.data.properties.object?.properties as Record<string, Record<string, unknown>> | undefined)?.id ?? schema.properties.subject,
    keyDescription:
      'The object\'s id for an object\'s event, the organization id for a profile change; also the event\'s `subject`: compaction keeps the latest event of each object and the latest profile of each organization.',
  },
  {
    topic: AUDIT_TOPIC,
    title: 'Audit stream',
    description:
      'Every record of every organization\'s audit log (ADR 0024), hash chain included, for a SIEM. ' +
      `Record types (\`data.type\`, an open list): ${AUDIT_EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}. ` +
      'A consumer that is down for longer than the retention misses records (they stay in the audit log, readable in the settings area).',
    settings: { partitions: 6, 'cleanup.policy': ['delete'], 'retention.ms': 7 * 24 * 3600 * 1000 },
    subscribing:
      'A consumer group of its own. Deduplicate by `data.id` and order one organization\'s records by `data.seq` (gap-free per organization), not by arrival. ' +
      'Keep the latest `seq` and `hash` of each organization outside the platform: they are the anchors `verify-audit` checks the chain against.',
    events: [[AUDIT_EVENT_V1, AUDIT_EVENT_SCHEMA as unknown as Record<string, unknown>]],
    keyOf: (schema) => schema.properties.subject,
    keyDescription: 'The organization id (`org_...`), also the event\'s `subject`: one organization\'s records go to one partition.',
  },
  {
    topic: WEBHOOK_ENDPOINTS_TOPIC,
    title: 'Webhook endpoints',
    description:
      'What happens to a webhook endpoint that other services act on (ADR 0037): today, an endpoint the platform disabled because no delivery to it had succeeded for 5 days, which the auth service records in the organization\'s audit log (`webhook_endpoint.disabled`). ' +
      'Published by the webhook service through its outbox, in the transaction that disabled the endpoint. ' +
      'The list of types is open: skip a type you do not know, and treat `data.reason` as informative and its list as open.',
    settings: { partitions: 6, 'cleanup.policy': ['delete'], 'retention.ms': 30 * 24 * 3600 * 1000 },
    subscribing:
      'One consumer group per subscribing service (its instances share the work); start from the earliest offset the first time. Validate each event against the schema of its type, skip unknown types, and apply an event twice without harm: the same disabling always has the same CloudEvents `id`.',
    events: Object.entries(WEBHOOK_ENDPOINT_EVENT_SCHEMAS) as Array<[string, Record<string, unknown>]>,
    keyOf: (schema) => schema.properties.subject,
    keyDescription: 'The webhook endpoint id (`wep_...`), also the event\'s `subject`: one endpoint\'s events go to one partition.',
  },
  {
    topic: API_KEYS_TOPIC,
    title: 'API key changes told by webhook',
    description:
      'The changes to an API key that its owner\'s systems are told of by webhook (`api_key.expiring`, `.revoked`, `.exposed`, `.secret_rolled`, ADR 0037), each with the key as the settings API shows it at that instant (never a secret). ' +
      'Published by the auth service through its outbox, in the transaction of the change. Not for token verifiers: every revocation also comes on `auth.revocations.v1`. ' +
      'Kept 30 days, not the revocation topic\'s 2 hours, so that a subscriber down for longer still reads every change. ' +
      'The list of types is open: skip a type you do not know.',
    settings: { partitions: 6, 'cleanup.policy': ['delete'], 'retention.ms': 30 * 24 * 3600 * 1000 },
    subscribing:
      'One consumer group per subscribing service (its instances share the work); start from the earliest offset the first time. Validate each event against the schema of its type, skip unknown types, and apply an event twice without harm: a redelivered change has the same CloudEvents `id`.',
    events: Object.entries(API_KEY_EVENT_SCHEMAS) as Array<[string, Record<string, unknown>]>,
    keyOf: (schema) => schema.properties.subject,
    keyDescription: 'The API key id (`key_...`), also the event\'s `subject`: one key\'s changes go to one partition.',
  },
];

/** The Kafka headers of every message (CloudEvents structured content mode, and the trace context). */
const HEADERS_SCHEMA = {
  type: 'object',
  required: ['content-type'],
  properties: {
    'content-type': {
      const: 'application/cloudevents+json; charset=UTF-8',
      description: 'CloudEvents structured content mode (CloudEvents Kafka protocol binding 1.0): the whole event is the message value.',
    },
    traceparent: {
      type: 'string',
      pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
      description: 'W3C Trace Context of the span that sent the message, when the platform runs with tracing on (ADR 0028). Continue it to join the trace of the request that caused the event.',
    },
    tracestate: { type: 'string', description: 'W3C Trace Context vendor state, sent with traceparent when there is any.' },
  },
};

const KAFKA_BINDING_VERSION = '0.5.0';

/** camelCase identifier from a topic or type: `auth.revocations.v1` → `authRevocationsV1`. */
const identifier = (name: string) => name.replace(/[._-]+([a-z0-9])/gi, (_, c: string) => c.toUpperCase());

/** The contract's schema as an AsyncAPI Schema object (see "Payload schemas" above). */
function payloadSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return JSON.parse(JSON.stringify(rest)) as Record<string, unknown>;
}


/** `6 partitions` per topic, said once when all topics agree. */
function partitionsText(): string {
  const counts = [...new Set(TOPICS.map((t) => t.settings.partitions))];
  return counts.length === 1 ? `Each topic has ${counts[0]} partitions.` : TOPICS.map((t) => `\`${t.topic}\` has ${t.settings.partitions} partitions.`).join(' ');
}

/** "2 hours", "7 days", "compacted ..." from a topic's settings. */
function retentionText(settings: TopicSettings): string {
  const ms = settings['retention.ms'];
  const kept = ms === undefined ? '' : ms % 86400000 === 0 ? `${ms / 86400000} days` : ms % 3600000 === 0 ? `${ms / 3600000} hours` : `${ms} ms`;
  const parts = [
    ...(settings['cleanup.policy'].includes('compact') ? ['compacted, the latest event of each key stays'] : []),
    ...(settings['cleanup.policy'].includes('delete') && kept ? [`kept ${kept}`] : []),
  ];
  return parts.join(', ');
}

function description(): string {
  return [
    'The events the invoicing platform publishes on Kafka, for services that subscribe to them from outside the platform. The HTTP API is described by the OpenAPI document at `/api/v1/openapi.json`; both are generated from the same contracts (`libs/contracts`).',
    '',
    '**This document describes the platform**, so every operation is `send`: the platform sends each message, and a subscriber receives it.',
    '',
    '**Format.** Every message value is a CloudEvents 1.0 event in *structured* content mode (CloudEvents Kafka protocol binding): the value is the whole event as UTF-8 JSON (`specversion`, `id`, `source`, `type`, `subject`, `time`, `datacontenttype: application/json`, `data`), and the `content-type` header is `application/cloudevents+json; charset=UTF-8`. Binary mode (`ce_*` headers) is not used. The message key is a plain UTF-8 string, the event\'s `subject`; there is no schema registry. Each message payload below is the JSON Schema its publisher validates every event against before sending it (files in `libs/contracts/src/events/schemas/`).',
    '',
    '**Delivery: at least once.** Events are written to a transactional outbox together with the change they announce and published by a relay (ADR 0004), with `acks=all` through an idempotent producer (ADR 0030): an event is never lost, also while Kafka is down (it is delivered late), but it may be delivered more than once (a relay retry, or a revocation\'s direct send racing the relay). A redelivered event has the same CloudEvents `id`: applying an event twice must change nothing.',
    '',
    `**Keys and order.** ${partitionsText()} The key picks the partition (murmur2, as Kafka's Java client), so all events of one key stay on one partition and Kafka keeps their order there. The platform does not promise to write one key's events in the order they happened: use the event's own fields where order matters (\`data.version\` of an allowlist change or of a profile change, \`data.seq\` of an audit record).`,
    '',
    `**Retention.** ${TOPICS.map((t) => `\`${t.topic}\`: ${retentionText(t.settings)}`).join('; ')}. In production every topic is replicated 3 times with \`min.insync.replicas=2\`; locally once.`,
    '',
    '**Versions.** A type\'s name ends in its version (`.v1`). A version only gains optional meaning (a new `reason`, a new audit record type), never changes it; a change that would is a new type (`.v2`), and new types may appear on a topic: skip those you do not know.',
    '',
    '**Servers.** The servers below are the development brokers. Production brokers are deployment-specific: the platform team gives a subscriber the bootstrap servers, the listener\'s security (TLS, SASL) and the ACLs of its consumer group; topics, keys and messages are the same everywhere.',
  ].join('\n');
}

/**
 * The document. `version` is the document's own version (info.version), as for the OpenAPI document.
 */
export function buildAsyncApiDocument(options: { version?: string } = {}): Record<string, unknown> {
  const examples = eventExamples();
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = { CloudEventsKafkaHeaders: HEADERS_SCHEMA };

  for (const topic of TOPICS) {
    const channelId = identifier(topic.topic);
    const channelMessages: Record<string, unknown> = {};
    for (const [type, contract] of topic.events) {
      const schema = contract as EventSchema;
      schemas[type] = payloadSchema(schema);
      const example = examples[type];
      messages[type] = {
        name: type,
        title: type,
        summary: `${type} on ${topic.topic}`,
        ...(schema.description ? { description: schema.description } : {}),
        contentType: 'application/cloudevents+json',
        headers: { $ref: '#/components/schemas/CloudEventsKafkaHeaders' },
        payload: { $ref: `#/components/schemas/${type}` },
        bindings: {
          kafka: { key: { ...topic.keyOf(schema), description: topic.keyDescription }, bindingVersion: KAFKA_BINDING_VERSION },
        },
        ...(example
          ? { examples: [{ name: identifier(`${type}.example`), summary: `A ${type} event`, headers: { 'content-type': 'application/cloudevents+json; charset=UTF-8' }, payload: example }] }
          : {}),
      };
      channelMessages[type] = { $ref: `#/components/messages/${type}` };
    }
    channels[channelId] = {
      address: topic.topic,
      title: topic.title,
      description: topic.description,
      messages: channelMessages,
      bindings: {
        kafka: {
          partitions: topic.settings.partitions,
          topicConfiguration: {
            'cleanup.policy': topic.settings['cleanup.policy'],
            ...(topic.settings['retention.ms'] !== undefined ? { 'retention.ms': topic.settings['retention.ms'] } : {}),
          },
          bindingVersion: KAFKA_BINDING_VERSION,
        },
      },
    };
    operations[identifier(`send.${topic.topic}`)] = {
      action: 'send',
      channel: { $ref: `#/channels/${channelId}` },
      title: `The platform publishes on ${topic.topic}`,
      summary: topic.title,
      description: topic.subscribing,
      messages: Object.keys(channelMessages).map((type) => ({ $ref: `#/channels/${channelId}/messages/${type}` })),
    };
  }

  return {
    asyncapi: '3.0.0',
    id: 'urn:invoicing:platform:events',
    info: {
      title: 'Invoicing platform events',
      version: options.version ?? '1.0.0',
      description: description(),
    },
    defaultContentType: 'application/cloudevents+json',
    servers: {
      compose: {
        host: 'localhost:9094',
        protocol: 'kafka',
        title: 'docker compose (development)',
        description:
          'The broker of `docker compose up` (docker-compose.yml), as published on the host: the EXTERNAL listener, 127.0.0.1 only, PLAINTEXT, no authentication. E.g. `kcat -C -b localhost:9094 -t auth.revocations.v1`. Production brokers are deployment-specific.',
      },
      local: {
        host: '127.0.0.1:9092',
        protocol: 'kafka',
        title: 'tools/infra (development)',
        description: 'The single local broker that `tools/infra/up.sh` starts (KRaft, PLAINTEXT, no authentication), which the services use when run from sources. Production brokers are deployment-specific.',
      },
    },
    channels,
    operations,
    components: { schemas, messages },
  };
}
