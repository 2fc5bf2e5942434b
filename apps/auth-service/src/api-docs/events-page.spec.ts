import { buildAsyncApiDocument } from '@invoicing/contracts';
import { ASYNCAPI_PATH, DOCS_PATH, EVENTS_PATH } from './docs-site';
import { buildEventsPage } from './events-page';

interface Doc {
  info: { title: string; description: string };
  servers: Record<string, { host: string }>;
  channels: Record<string, { address: string; messages: Record<string, unknown> }>;
  operations: Record<string, { action: string }>;
  components: { messages: Record<string, { name: string; payload: { $ref: string } }>; schemas: Record<string, { properties: Record<string, unknown> }> };
}

const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

describe(buildEventsPage.name, () => {
  const doc = buildAsyncApiDocument() as unknown as Doc;
  const page = buildEventsPage(doc as unknown as Record<string, unknown>);
  const ids = new Set([...page.matchAll(/\bid="([^"]+)"/g)].map((m) => m[1]));

  it('lists every server, channel, operation and message of the document, each with its anchor', () => {
    for (const [id, server] of Object.entries(doc.servers)) {
      expect(ids).toContain(`server-${id}`);
      expect(page).toContain(`<code>${server.host}</code>`);
    }
    for (const [id, channel] of Object.entries(doc.channels)) {
      expect(ids).toContain(`channel-${id}`);
      expect(page).toContain(`<code>${channel.address}</code>`);
    }
    for (const [id, operation] of Object.entries(doc.operations)) {
      expect(ids).toContain(`operation-${id}`);
      expect(operation.action).toBe('send');
    }
    for (const [id, message] of Object.entries(doc.components.messages)) {
      expect(ids).toContain(`message-${id}`);
      expect(page).toContain(`<h3><code>${message.name}</code></h3>`);
    }
    expect(page).toContain('<span class="action">send</span>');
  });

  it('shows each message\'s payload schema field by field, its Kafka key and headers, the raw schema and an example', () => {
    const sections = page.split('<section id="message-').slice(1);
    expect(sections).toHaveLength(Object.keys(doc.components.messages).length);
    for (const section of sections) {
      const id = section.slice(0, section.indexOf('"'));
      const payload = doc.components.schemas[id];
      // Every top-level field of the payload has its row, and the nested data fields theirs.
      for (const field of Object.keys(payload.properties)) expect({ id, row: section.includes(`<td><code>${field}</code>`) }).toEqual({ id, row: true });
      expect(section).toMatch(/<td><code>data\.[a-z_]+<\/code>/);
      expect(section).toContain('<caption>Kafka message key</caption>');
      expect(section).toContain('<caption>Kafka headers</caption>');
      expect(section).toContain('<caption>Payload (the message value)</caption>');
      expect(section).toContain('<summary>Payload JSON Schema</summary>');
      expect(section).toMatch(/<details open><summary>Example: /);
      expect(text(section)).toContain(`"type": "${id}"`);
    }
    // Constraints are spelt out: the revocations' session ids, the allowlist bound.
    expect(text(page)).toContain('data.session_ids[]');
    expect(text(page)).toContain('pattern ^ses_[0-9a-f]{32}$');
    expect(text(page)).toContain('max items 100');
    expect(text(page)).toContain('always "application/cloudevents+json; charset=UTF-8"');
  });

  it('renders the document\'s descriptions: delivery guarantees, keys, retention, CloudEvents mode', () => {
    const body = text(page);
    expect(body).toMatch(/Delivery: at least once\./);
    expect(body).toMatch(/structured content mode/);
    expect(body).toMatch(/Production brokers are deployment-specific/);
    expect(page).toContain('<strong>Delivery: at least once.</strong>');
  });

  it('has no script, loads nothing, and links only to this origin\'s documents or its own anchors', () => {
    expect(page).not.toMatch(/<script\b/i);
    expect(page).not.toMatch(/\bsrc=/);
    expect(page).not.toMatch(/\bstyle="/);
    const hrefs = [...page.matchAll(/\bhref="([^"]*)"/g)].map((m) => m[1]);
    for (const href of hrefs) expect(href).toMatch(/^(?:#[\w.-]+|\/api\/v1\/(?:docs|docs\/events|openapi\.json|asyncapi\.json)|data:,)$/);
    // Every in-page link has its target.
    const broken = hrefs.filter((h) => h.startsWith('#') && !ids.has(h.slice(1)));
    expect(broken).toEqual([]);
    expect(hrefs).toEqual(expect.arrayContaining([DOCS_PATH, ASYNCAPI_PATH]));
    expect(page).toContain('<span aria-current="page">Events (Kafka)</span>');
    expect(EVENTS_PATH).toBe('/api/v1/docs/events');
  });

  it('escapes what the document says', () => {
    const hostile = structuredClone(doc);
    hostile.info.title = 'Events <img src=x onerror=alert(1)>';
    hostile.info.description = 'A <script>alert(1)</script> and `<b>code</b>`';
    const html = buildEventsPage(hostile as unknown as Record<string, unknown>);
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('<title>Events &lt;img src=x onerror=alert(1)&gt;</title>');
    expect(html).toContain('<code>&lt;b&gt;code&lt;/b&gt;</code>');
  });

  it('refuses a document with a $ref it cannot resolve', () => {
    const broken = structuredClone(doc);
    const [first] = Object.values(broken.components.messages);
    first.payload = { $ref: '#/components/schemas/nothing' };
    expect(() => buildEventsPage(broken as unknown as Record<string, unknown>)).toThrow('unresolved $ref #/components/schemas/nothing');
  });
});
