import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as contracts from '../index';
import { validateApiKeyEvent } from '../events/api-key-events';
import { validateAuditEvent } from '../events/audit-events';
import { validateDomainTopicEvent } from '../events/domain-events';
import { validateAuthTopicEvent } from '../events/revocation-events';
import { validateWebhookEndpointEvent } from '../events/webhook-endpoint-events';
import { buildAsyncApiDocument } from './asyncapi-document';

type Schema = Record<string, unknown>;
interface Message {
  name: string;
  contentType: string;
  headers: { $ref: string };
  payload: { $ref: string };
  bindings: { kafka: { key: Schema } };
  examples: Array<{ headers: Record<string, string>; payload: Record<string, unknown> & { type: string; subject: string } }>;
}
interface AsyncApiDocument {
  asyncapi: string;
  info: { title: string; version: string; description: string };
  servers: Record<string, { host: string; protocol: string; description: string }>;
  channels: Record<string, { address: string; messages: Record<string, { $ref: string }>; bindings: { kafka: { partitions: number; topicConfiguration: Schema } } }>;
  operations: Record<string, { action: string; channel: { $ref: string }; messages: Array<{ $ref: string }> }>;
  components: { schemas: Record<string, Schema>; messages: Record<string, Message> };
}

const doc = buildAsyncApiDocument() as unknown as AsyncApiDocument;
const SCHEMA_DIR = join(__dirname, '..', 'events', 'schemas');

/** Resolves a local `$ref` of the document. */
const resolve = <T>(ref: string): T =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((node, part) => (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc) as T;

/**
 * What the contracts export, found without a list of ours: a new topic or event type exported by
 * the contracts (or a new schema file) that the document lacks fails here.
 */
function contractTopicsAndTypes(): { topics: Set<string>; types: Set<string> } {
  const exported = Object.entries(contracts as Record<string, unknown>);
  const topics = new Set(exported.filter(([name, v]) => name.endsWith('_TOPIC') && typeof v === 'string').map(([, v]) => v as string));
  const types = new Set<string>();
  // A CloudEvents type: invoicing.<producer>.<event>.v<N> (a topic has one segment less).
  const isType = (v: unknown): v is string => typeof v === 'string' && /^invoicing\.[a-z_]+\.[a-z_]+\.v\d+$/.test(v);
  for (const [name, value] of exported) {
    if (isType(value)) types.add(value);
    if (/_EVENT_TYPES$/.test(name) && value && typeof value === 'object') Object.values(value).filter(isType).forEach((t) => types.add(t));
    if (/_EVENT_SCHEMAS?$/.test(name) && value && typeof value === 'object') {
      const schemas = 'title' in value ? [value] : Object.values(value);
      for (const s of schemas as Array<{ title?: string }>) if (isType(s.title)) types.add(s.title);
      if (!('title' in value)) Object.keys(value).filter(isType).forEach((t) => types.add(t));
    }
  }
  for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.schema.json'))) {
    types.add((JSON.parse(readFileSync(join(SCHEMA_DIR, file), 'utf8')) as { title: string }).title);
  }
  return { topics, types };
}

/** The contract schema of a CloudEvents type, as the publishers validate with it. */
function contractSchema(type: string): Schema {
  const all: Record<string, Schema> = {
    ...contracts.REVOCATION_EVENT_SCHEMAS,
    ...contracts.DOMAIN_TOPIC_EVENT_SCHEMAS,
    [contracts.AUDIT_EVENT_V1]: contracts.AUDIT_EVENT_SCHEMA,
    ...contracts.WEBHOOK_ENDPOINT_EVENT_SCHEMAS,
    ...contracts.API_KEY_EVENT_SCHEMAS,
  };
  return all[type];
}

/** The contracts' own validator of each topic. */
const VALIDATORS: Record<string, (value: unknown) => { ok: boolean; errors?: string[] }> = {
  [contracts.REVOCATIONS_TOPIC]: (v) => validateAuthTopicEvent(v),
  [contracts.DOMAIN_TOPIC]: validateDomainTopicEvent,
  [contracts.AUDIT_TOPIC]: validateAuditEvent,
  [contracts.WEBHOOK_ENDPOINTS_TOPIC]: validateWebhookEndpointEvent,
  [contracts.API_KEYS_TOPIC]: validateApiKeyEvent,
};

/** Draft-07 (what AsyncAPI Schema extends), with the contracts' formats: what a subscriber's AsyncAPI tooling checks. */
function draft07(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addFormat('currency', /^[A-Z]{3}$/);
  ajv.addFormat('country', /^[A-Z]{2}$/);
  return ajv;
}

/** Message id, its topic and its channel, for every message of every channel. */
const channelMessages = Object.entries(doc.channels).flatMap(([channelId, channel]) =>
  Object.entries(channel.messages).map(([id, ref]) => ({ id, channelId, topic: channel.address, message: resolve<Message>(ref.$ref) })),
);

describe(buildAsyncApiDocument.name, () => {
  it('is AsyncAPI 3.0.0 with Kafka servers (the development brokers) and says production brokers are deployment-specific', () => {
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.info).toMatchObject({ title: expect.any(String), version: '1.0.0' });
    expect(buildAsyncApiDocument({ version: '2.3.4' })).toMatchObject({ info: { version: '2.3.4' } });
    expect(Object.values(doc.servers).map((s) => s.protocol)).toEqual(['kafka', 'kafka']);
    expect(doc.servers.compose.host).toBe('localhost:9094');
    for (const server of Object.values(doc.servers)) expect(server.description).toMatch(/Production brokers are deployment-specific/);
    for (const promise of [/at least once/i, /structured/, /Binary mode .* is not used/, /same CloudEvents `id`/, /order/, /compacted/, /2 hours/, /7 days/, /30 days/]) {
      expect(doc.info.description).toMatch(promise);
    }
  });

  it('has a channel for every topic the contracts export and a message for every CloudEvents type, and nothing else', () => {
    const { topics, types } = contractTopicsAndTypes();
    // The derivation itself finds what is known today.
    expect(topics.size).toBeGreaterThanOrEqual(3);
    expect(types.size).toBeGreaterThanOrEqual(4 + 1 + 5);
    expect(new Set(Object.values(doc.channels).map((c) => c.address))).toEqual(topics);
    expect(new Set(channelMessages.map((m) => m.id))).toEqual(types);
    expect(new Set(Object.keys(doc.components.messages))).toEqual(types);
    // Each type on exactly one topic, the one its schema's description or constant names.
    expect(channelMessages).toHaveLength(types.size);
    for (const { id, topic } of channelMessages) {
      const { description } = contractSchema(id) as { description?: string };
      if (description) expect({ id, topic: /on topic (\S+) /.exec(description)?.[1] }).toEqual({ id, topic });
    }
    // The objects' events and the settings' one (an organization's profile, keyed by the organization).
    expect(channelMessages.filter((m) => m.topic === contracts.DOMAIN_TOPIC).map((m) => m.id).sort()).toEqual(
      [...Object.keys(contracts.DOMAIN_TOPIC_TYPES), contracts.ORGANIZATION_PROFILE_CHANGED_V1].sort(),
    );
    expect(Object.keys(contracts.DOMAIN_TOPIC_EVENT_SCHEMAS).sort()).toEqual([...Object.keys(contracts.DOMAIN_TOPIC_TYPES), contracts.ORGANIZATION_PROFILE_CHANGED_V1].sort());
    expect(Object.keys(contracts.DOMAIN_TOPIC_TYPES)).toEqual([...Object.values(contracts.DOMAIN_EVENT_TYPES), contracts.INVOICE_BALANCE_CHANGED_TYPE]);
  });

  it('has one send operation per channel, with exactly that channel\'s messages', () => {
    expect(Object.keys(doc.operations)).toHaveLength(Object.keys(doc.channels).length);
    for (const [channelId, channel] of Object.entries(doc.channels)) {
      const operations = Object.values(doc.operations).filter((o) => o.channel.$ref === `#/channels/${channelId}`);
      expect(operations).toHaveLength(1);
      expect(operations[0].action).toBe('send');
      expect(operations[0].messages.map((m) => m.$ref)).toEqual(Object.keys(channel.messages).map((id) => `#/channels/${channelId}/messages/${id}`));
    }
  });

  it('gives each message its contract\'s JSON Schema as payload, without $schema and $id, and the contract is draft 2020-12', () => {
    for (const { id, message } of channelMessages) {
      const { $schema, $id: _id, ...rest } = contractSchema(id);
      expect($schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect({ id, payload: resolve(message.payload.$ref) }).toEqual({ id, payload: rest });
      expect(message.contentType).toBe('application/cloudevents+json');
    }
  });

  it('uses only schema keywords that mean the same in draft-07 (AsyncAPI Schema) and draft 2020-12', () => {
    // Not here: $defs, prefixItems, items as an array, dependentRequired/Schemas, unevaluated*, $dynamicRef,
    // $anchor, exclusiveMinimum/Maximum as booleans: a schema that needs one needs schemaFormat draft 2020-12,
    // which AsyncAPI parsers do not read yet.
    const SAME = new Set([
      'type', 'properties', 'required', 'additionalProperties', 'const', 'enum', 'pattern', 'format', 'minLength', 'maxLength',
      'minimum', 'maximum', 'items', 'minItems', 'maxItems', 'uniqueItems', 'title', 'description', 'oneOf', 'anyOf', 'allOf', 'not',
    ]);
    const unknown: string[] = [];
    const walk = (schema: Schema, path: string) => {
      for (const [keyword, value] of Object.entries(schema)) {
        if (!SAME.has(keyword)) unknown.push(`${path}/${keyword}`);
        if (keyword === 'properties') for (const [name, sub] of Object.entries(value as Record<string, Schema>)) walk(sub, `${path}/properties/${name}`);
        if (keyword === 'items') {
          if (Array.isArray(value)) unknown.push(`${path}/items (array)`);
          else walk(value as Schema, `${path}/items`);
        }
        if (keyword === 'additionalProperties' && typeof value === 'object') walk(value as Schema, `${path}/additionalProperties`);
        if (['oneOf', 'anyOf', 'allOf'].includes(keyword)) (value as Schema[]).forEach((s, i) => walk(s, `${path}/${keyword}/${i}`));
        if (keyword === 'not') walk(value as Schema, `${path}/not`);
      }
    };
    for (const [name, schema] of Object.entries(doc.components.schemas)) walk(schema, name);
    expect(unknown).toEqual([]);
  });

  it('has an example of every message that the contracts\' own validators and the stated payload accept, and a broken one they refuse', () => {
    const ajv = draft07();
    for (const { id, topic, message } of channelMessages) {
      expect({ id, examples: message.examples.length }).toEqual({ id, examples: 1 });
      const [example] = message.examples;
      expect(example.payload.type).toBe(id);
      // The contracts' validators (Ajv 2020-12, as the publishers and subscribers validate).
      expect({ id, result: VALIDATORS[topic](example.payload) }).toEqual({ id, result: expect.objectContaining({ ok: true }) });
      // The payload and headers as the document states them (draft-07).
      const payload = ajv.compile(resolve<Schema>(message.payload.$ref));
      expect({ id, valid: payload(example.payload), errors: payload.errors ?? null }).toEqual({ id, valid: true, errors: null });
      const headers = ajv.compile(resolve<Schema>(message.headers.$ref));
      expect(headers(example.headers)).toBe(true);
      expect(headers({ ...example.headers, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })).toBe(true);
      expect(headers({ 'content-type': 'application/json' })).toBe(false);
      // The key: the event's subject, as the publishers key every message.
      expect(ajv.validate(message.bindings.kafka.key, example.payload.subject)).toBe(true);
      // Not a vacuous payload: another type, or no data, is refused.
      expect(payload({ ...example.payload, type: 'invoicing.other.thing.v1' })).toBe(false);
      const { data: _data, ...withoutData } = example.payload;
      expect(payload(withoutData)).toBe(false);
    }
  });

  it('shows an audit record whose hash a subscriber can verify (ADR 0024)', () => {
    const [{ message }] = channelMessages.filter((m) => m.topic === contracts.AUDIT_TOPIC);
    const record = message.examples[0].payload.data as Record<string, unknown>;
    const canonical = (value: unknown): string =>
      value && typeof value === 'object' && !Array.isArray(value)
        ? `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`
        : Array.isArray(value)
          ? `[${value.map(canonical).join(',')}]`
          : JSON.stringify(value);
    const { prev_hash, hash, ...content } = record;
    const expected = createHash('sha256').update(`invoicing-audit-v1\n${String(prev_hash)}\n${canonical(content)}`).digest('hex');
    expect(hash).toBe(expected);
  });

  it('states each topic\'s partitions and retention, and keys every message by the event\'s subject', () => {
    const byTopic = Object.fromEntries(Object.values(doc.channels).map((c) => [c.address, c.bindings.kafka]));
    expect(byTopic[contracts.REVOCATIONS_TOPIC]).toMatchObject({ partitions: 6, topicConfiguration: { 'cleanup.policy': ['delete'], 'retention.ms': 2 * contracts.ACCESS_TOKEN_TTL_SECONDS * 1000 } });
    expect(byTopic[contracts.DOMAIN_TOPIC]).toMatchObject({ partitions: 6, topicConfiguration: { 'cleanup.policy': ['compact'] } });
    expect(byTopic[contracts.AUDIT_TOPIC]).toMatchObject({ partitions: 6, topicConfiguration: { 'cleanup.policy': ['delete'], 'retention.ms': 604800000 } });
    expect(byTopic[contracts.WEBHOOK_ENDPOINTS_TOPIC]).toMatchObject({ partitions: 6, topicConfiguration: { 'cleanup.policy': ['delete'], 'retention.ms': 30 * 86400000 } });
    expect(byTopic[contracts.API_KEYS_TOPIC]).toMatchObject({ partitions: 6, topicConfiguration: { 'cleanup.policy': ['delete'], 'retention.ms': 30 * 86400000 } });
    for (const { id, topic, message } of channelMessages) {
      const kind = (contracts.DOMAIN_TOPIC_TYPES as Record<string, string>)[id] as keyof typeof contracts.ID_PREFIXES | undefined;
      const prefix =
        topic === contracts.REVOCATIONS_TOPIC || topic === contracts.API_KEYS_TOPIC
          ? 'key'
          : topic === contracts.AUDIT_TOPIC || id === contracts.ORGANIZATION_PROFILE_CHANGED_V1
            ? 'org'
            : topic === contracts.WEBHOOK_ENDPOINTS_TOPIC
              ? 'wep'
              : kind && contracts.ID_PREFIXES[kind];
      expect({ id, key: message.bindings.kafka.key.pattern }).toEqual({ id, key: `^${prefix}_[0-9a-f]{32}$` });
    }
  });

  it('is JSON: what the auth service serves is the same document', () => {
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
    expect(buildAsyncApiDocument()).toEqual(doc);
  });
});
