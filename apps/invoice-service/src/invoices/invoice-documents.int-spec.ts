import { DOMAIN_TOPIC, newId, ORGANIZATION_PROFILE_CHANGED_V1, OrganizationProfile, parsePublicId, validateDomainTopicEvent } from '@invoicing/contracts';
import { createKafka, KafkaEventPublisher } from '@invoicing/event-bus';
import { DomainEventsConsumer } from '@invoicing/resource-api';
import { call, ResourceTestApp, startResourceTestApp } from '@invoicing/resource-api/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { INVOICE_SERVICE } from '../invoice-service.definition';
import { SELLER } from '../testing/invoice-documents';

/**
 * The invoice's documents through the service (Postgres, Kafka; the renderers themselves are the
 * unit specs' and the validator tier's): content negotiation, the parties as they stood at the
 * invoice's creation, the organization profiles from the domain topic, and the refusals.
 */
let app: ResourceTestApp;
let db: DataSource;
beforeAll(async () => {
  app = await startResourceTestApp(INVOICE_SERVICE);
  db = app.service.app.get<DataSource>(getDataSourceToken());
}, 60000);
afterAll(() => app?.close());

/** pdftotext's reading of a PDF (poppler-utils: tools/setup.sh installs it). */
function textOf(pdf: Buffer): string {
  const out = spawnSync('pdftotext', ['-layout', '-', '-'], { input: pdf });
  if (out.error) throw out.error;
  return out.stdout.toString('utf8');
}

function profileEvent(org: string, version: number, profile: Partial<OrganizationProfile>) {
  const whole: OrganizationProfile = { object: 'organization_profile', organization_id: org, ...SELLER, ...profile, version, updated_at: new Date().toISOString() } as OrganizationProfile;
  const event = {
    specversion: '1.0',
    id: randomUUID(),
    source: '/invoicing/auth-service',
    type: ORGANIZATION_PROFILE_CHANGED_V1,
    subject: org,
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: { organization_id: org, version, changed_fields: ['legal_name'], profile: whole },
  };
  expect(validateDomainTopicEvent(event)).toMatchObject({ ok: true });
  return event;
}

/** An event handed to the service's consumer as a message of the topic. */
const deliver = (event: unknown) =>
  app.service.app.get(DomainEventsConsumer).handle({ topic: DOMAIN_TOPIC, partition: 0, offset: '0', key: null, value: Buffer.from(JSON.stringify(event)), timestamp: Date.now() });

async function invoiceOf(org: string, client: Record<string, unknown> = {}): Promise<string> {
  const clientId = newId('cli');
  await app.remember('client', org, { id: clientId, name: 'Globex Corporation', email: 'ap@globex.example', tax_id: 'FR40303265045', address: { line1: '1 Rue de la Paix', line2: null, city: 'Paris', postal_code: '75002', region: null, country: 'FR' }, created_at: new Date().toISOString(), ...client });
  const r = await call('POST', `${app.baseUrl}/api/v1/invoices`, {
    token: app.token({ organizationPublicId: org }),
    body: { client_id: clientId, currency: 'EUR', issue_date: '2026-11-02', due_date: '2026-12-02', line_items: [{ description: 'Consulting', quantity: 2, unit_price: 50000, tax_rate_bps: 1900 }] },
  });
  expect(r.status).toBe(201);
  return String(r.body.id);
}

async function get(org: string, id: string, accept?: string, query = ''): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const response = await fetch(`${app.baseUrl}/api/v1/invoices/${id}${query}`, {
    headers: { authorization: `Bearer ${app.token({ organizationPublicId: org })}`, ...(accept === undefined ? {} : { accept }) },
  });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('GET /api/v1/invoices/{id} as a document', () => {
  it('answers the PDF with the seller and buyer as they stood when the invoice was created', async () => {
    const org = app.newOrganizationPublicId();
    await deliver(profileEvent(org, 1, { legal_name: 'Nordlicht Software GmbH' }));
    const id = await invoiceOf(org);
    // Both change afterwards: the invoice's documents do not.
    await deliver(profileEvent(org, 2, { legal_name: 'Nordlicht Holding AG' }));
    await app.remember('client', org, { id: `cli_${'f'.repeat(32)}`, name: 'Someone else', created_at: new Date().toISOString() });

    const pdf = await get(org, id, 'application/pdf');
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('content-disposition')).toBe('inline; filename="INV-000001.pdf"');
    expect(pdf.headers.get('vary')).toBe('Accept');
    expect(pdf.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = textOf(pdf.bytes);
    expect(text).toContain('Nordlicht Software GmbH');
    expect(text).not.toContain('Nordlicht Holding AG');
    expect(text).toContain('Globex Corporation');
    expect(text).toContain('INV-000001');
    expect(text).toContain('DE89 3704 0044 0532 0130 00');

    // An invoice created after the change prints the new name.
    const later = await invoiceOf(org);
    expect(textOf((await get(org, later, 'application/pdf')).bytes)).toContain('Nordlicht Holding AG');
  });

  it('answers the EN 16931 e-invoice: CII by default, UBL with syntax=ubl', async () => {
    const org = app.newOrganizationPublicId();
    await deliver(profileEvent(org, 1, {}));
    const id = await invoiceOf(org);
    const cii = await get(org, id, 'application/xml');
    expect(cii.status).toBe(200);
    expect(cii.headers.get('content-type')).toMatch(/^application\/xml/);
    expect(cii.headers.get('content-disposition')).toBe('inline; filename="INV-000001.xml"');
    const ciiText = cii.bytes.toString('utf8');
    expect(ciiText).toContain('<rsm:CrossIndustryInvoice');
    expect(ciiText).toContain('urn:cen.eu:en16931:2017');
    expect(ciiText).toContain('DE123456789');
    expect(ciiText).toContain('<ram:GrandTotalAmount>1190.00</ram:GrandTotalAmount>');
    const ubl = (await get(org, id, 'application/xml', '?syntax=ubl')).bytes.toString('utf8');
    expect(ubl).toMatch(/<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/);
    expect(ubl).toContain('<cbc:PayableAmount currencyID="EUR">1190.00</cbc:PayableAmount>');
  });

  it('answers JSON as before, with Vary: Accept, for no Accept, */* or application/json', async () => {
    const org = app.newOrganizationPublicId();
    const id = await invoiceOf(org);
    for (const accept of [undefined, '*/*', 'application/json', 'application/pdf;q=0.5, application/json']) {
      const r = await get(org, id, accept);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.headers.get('vary')).toBe('Accept');
      expect(JSON.parse(r.bytes.toString('utf8'))).toMatchObject({ object: 'invoice', id });
    }
  });

  it('refuses what it cannot answer: 406, 400, 404 across organizations, 422 for an e-invoice the data cannot make', async () => {
    const org = app.newOrganizationPublicId();
    const id = await invoiceOf(org);
    const notAcceptable = await get(org, id, 'text/html');
    expect(notAcceptable.status).toBe(406);
    expect(notAcceptable.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(notAcceptable.bytes.toString('utf8')).detail).toContain('application/pdf');
    expect((await get(org, id, 'application/xml', '?syntax=zugferd')).status).toBe(400);
    expect((await get(org, id, 'application/xml', '?syntax=ubl&syntax=cii')).status).toBe(400);
    // Another organization's invoice is absent, whatever the representation.
    const stranger = app.newOrganizationPublicId();
    for (const accept of ['application/pdf', 'application/xml', 'application/json']) expect((await get(stranger, id, accept)).status).toBe(404);
    // No profile was ever set: the PDF prints without a seller; the e-invoice names what it lacks.
    expect((await get(org, id, 'application/pdf')).status).toBe(200);
    const xml = await get(org, id, 'application/xml');
    expect(xml.status).toBe(422);
    expect(xml.headers.get('vary')).toBe('Accept');
    const problem = JSON.parse(xml.bytes.toString('utf8')) as { errors: Array<{ field: string; code: string }> };
    expect(problem.errors.map((e) => e.field)).toEqual(expect.arrayContaining(['seller.legal_name', 'seller.vat_id', 'seller.address.country']));
    expect(new Set(problem.errors.map((e) => e.code))).toEqual(new Set(['required_for_e_invoice']));
  });

  it('says Vary: Accept on answers the guard gives too, and answers HEAD with the headers of the document without rendering it', async () => {
    const org = app.newOrganizationPublicId();
    const id = await invoiceOf(org);
    const unauthenticated = await fetch(`${app.baseUrl}/api/v1/invoices/${id}`, { headers: { accept: 'application/pdf' } });
    expect([unauthenticated.status, unauthenticated.headers.get('vary')]).toEqual([401, 'Accept']);
    // The list does not vary by Accept.
    const list = await fetch(`${app.baseUrl}/api/v1/invoices`, { headers: { authorization: `Bearer ${app.token({ organizationPublicId: org })}` } });
    expect(list.headers.get('vary')).toBeNull();
    const head = await fetch(`${app.baseUrl}/api/v1/invoices/${id}`, { method: 'HEAD', headers: { authorization: `Bearer ${app.token({ organizationPublicId: org })}`, accept: 'application/pdf' } });
    expect([head.status, head.headers.get('content-type'), head.headers.get('content-disposition')]).toEqual([200, 'application/pdf', 'inline; filename="INV-000001.pdf"']);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('keeps the highest version of a profile, whatever order the events come in, and takes them from the topic', async () => {
    const org = app.newOrganizationPublicId();
    await deliver(profileEvent(org, 3, { legal_name: 'Third' }));
    await deliver(profileEvent(org, 2, { legal_name: 'Second' }));
    await deliver(profileEvent(org, 3, { legal_name: 'Third' }));
    const kept = async () => (await db.query('SELECT version, profile->>$2 AS name FROM invoices.organization_profiles WHERE organization_id = $1', [parsePublicId('org', org), 'legal_name']))[0];
    expect(await kept()).toEqual({ version: 3, name: 'Third' });

    // Through Kafka, as the auth service's outbox relay publishes it.
    const publisher = new KafkaEventPublisher(createKafka({ brokers: app.config.KAFKA_BROKERS, clientId: 'invoice-documents-spec' }));
    try {
      const event = profileEvent(org, 4, { legal_name: 'Fourth' });
      await publisher.publish(DOMAIN_TOPIC, [{ key: org, value: JSON.stringify(event) }]);
      const deadline = Date.now() + 20000;
      while ((await kept()).version !== 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await kept()).toEqual({ version: 4, name: 'Fourth' });
    } finally {
      await publisher.close();
    }
  }, 30000);
});
