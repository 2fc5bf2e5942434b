import { DOCUMENT_QUEUE_PER_ORGANIZATION, DOCUMENT_RENDERS_PER_ORGANIZATION } from '@invoicing/contracts';
import type { ResourceDefinition, ResourceEntityBase } from '../resources/resource-definition';
import type { DataSource } from 'typeorm';
import { ObjectRepresentations, Represented } from './representations';

const filenameOf = (r: Represented) => ('filename' in r ? r.filename : null);

type Entity = ResourceEntityBase & { number: string | null };
const db = { query: async () => [] } as unknown as Pick<DataSource, 'query'>;

function invoices(overrides: Partial<ResourceDefinition<Entity, unknown>> = {}, render: () => Promise<Buffer> = async () => Buffer.from('%PDF-')): ObjectRepresentations<Entity> {
  const def = {
    resource: 'invoices',
    kind: 'invoice',
    representations: { 'application/pdf': render, 'application/xml': async () => Buffer.from('<x/>') },
    documentName: (e: Entity) => e.number,
    ...overrides,
  } as unknown as ResourceDefinition<Entity, unknown>;
  return new ObjectRepresentations(def, db);
}
const entity = (organizationId = 'org-a', number: string | null = 'INV-000042') => ({ id: 'i', organizationId, createdAt: new Date(), number }) as unknown as Entity;

describe(ObjectRepresentations.name, () => {
  it("refuses to start when the service's renderers are not the manifest's representations", () => {
    expect(() => invoices({ representations: { 'application/pdf': async () => Buffer.alloc(0) } })).toThrow(/promises the representations \[application\/pdf, application\/xml\], the service renders \[application\/pdf\]/);
    expect(() => new ObjectRepresentations({ resource: 'clients', kind: 'client', representations: { 'application/pdf': async () => Buffer.alloc(0) } } as never, db)).toThrow(/clients/);
    expect(new ObjectRepresentations({ resource: 'clients', kind: 'client' } as never, db).negotiated).toBe(false);
  });

  it('chooses by Accept, checks the parameters, and names the document by the definition (header-safe)', async () => {
    const r = invoices();
    expect(r.choose(undefined, {})).toEqual({ type: 'application/json', query: {} });
    expect(r.choose('application/xml', { syntax: 'ubl', other: 'ignored' })).toEqual({ type: 'application/xml', query: { syntax: 'ubl' } });
    expect(() => r.choose('application/xml', { syntax: 'x' })).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => r.choose('application/xml', { syntax: ['ubl', 'cii'] })).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => r.choose('image/png', {})).toThrow(expect.objectContaining({ status: 406 }));
    expect(await r.render(entity(), 'application/pdf', {})).toMatchObject({ type: 'application/pdf', filename: 'INV-000042.pdf' });
    expect(filenameOf(await r.render(entity('o', 'A"; x=y\r\n'), 'application/pdf', {}))).toBe('A___x_y__.pdf');
    expect(filenameOf(await r.render(entity('o', null), 'application/xml', {}))).toBe('invoice.xml');
  });

  it("renders an organization's documents one at a time with a bounded queue (429 past it); other organizations do not wait", async () => {
    const pending: Array<() => void> = [];
    const r = invoices({}, () => new Promise<Buffer>((resolve) => pending.push(() => resolve(Buffer.from('%PDF-')))));
    const mine = Array.from({ length: DOCUMENT_RENDERS_PER_ORGANIZATION + DOCUMENT_QUEUE_PER_ORGANIZATION }, () => r.render(entity('org-a'), 'application/pdf', {}));
    await expect(r.render(entity('org-a'), 'application/pdf', {})).rejects.toMatchObject({ status: 429 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(pending).toHaveLength(DOCUMENT_RENDERS_PER_ORGANIZATION);
    // Another organization's render starts at once.
    const theirs = r.render(entity('org-b'), 'application/pdf', {});
    await new Promise((resolve) => setImmediate(resolve));
    expect(pending).toHaveLength(DOCUMENT_RENDERS_PER_ORGANIZATION + 1);
    while (pending.length > 0) {
      pending.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await expect(Promise.all([...mine, theirs])).resolves.toHaveLength(mine.length + 1);
  });

  it("fails only the caller whose render failed: the organization's next render gets the slot", async () => {
    let calls = 0;
    const r = invoices({}, async () => {
      calls += 1;
      if (calls === 1) throw new Error('render failed');
      return Buffer.from('%PDF-');
    });
    const [failed, next] = await Promise.allSettled([r.render(entity('org-a'), 'application/pdf', {}), r.render(entity('org-a'), 'application/pdf', {})]);
    expect(failed).toMatchObject({ status: 'rejected', reason: { message: 'render failed' } });
    expect(next).toMatchObject({ status: 'fulfilled', value: { type: 'application/pdf' } });
  });

  it('does not render a document whose request was answered while it waited (503 to nobody), and frees its slot', async () => {
    let rendered = 0;
    const pending: Array<() => void> = [];
    const r = invoices({}, () => {
      rendered += 1;
      return new Promise<Buffer>((resolve) => pending.push(() => resolve(Buffer.from('%PDF-'))));
    });
    const first = r.render(entity('org-a'), 'application/pdf', {});
    let wanted = true;
    const abandoned = r.render(entity('org-a'), 'application/pdf', {}, () => wanted);
    await new Promise((resolve) => setImmediate(resolve));
    wanted = false;
    pending.shift()!();
    await first;
    await expect(abandoned).rejects.toMatchObject({ status: 503 });
    expect(rendered).toBe(1);
    // The slot is free again.
    const after = r.render(entity('org-a'), 'application/pdf', {});
    await new Promise((resolve) => setImmediate(resolve));
    pending.shift()!();
    await expect(after).resolves.toMatchObject({ type: 'application/pdf' });
  });
});
