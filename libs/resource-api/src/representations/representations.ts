import { DOCUMENT_QUEUE_PER_ORGANIZATION, DOCUMENT_RENDERS_PER_ORGANIZATION, ObjectRepresentation, representationsOf } from '@invoicing/contracts';
import { ProblemException } from '@invoicing/service-kit';
import { ConcurrencyGate } from '../rate-limit/concurrency-gate';
import type { PublicObject, Renderer, ResourceDefinition, ResourceEntityBase } from '../resources/resource-definition';
import { negotiate } from './negotiate';
import type { DataSource } from 'typeorm';

export const JSON_TYPE = 'application/json';

/** A get's answer: the object's JSON, a document of another media type, or (a HEAD) only the document's headers. */
export type Represented = { type: typeof JSON_TYPE; object: PublicObject } | { type: string; body: Buffer; filename: string } | { type: string; head: true; filename: string };

/**
 * The representations of a resource's objects besides JSON (the manifest's, representations.ts in
 * @invoicing/contracts), with the definition's renderers: which one an Accept asks for, the query
 * parameters they read, and a render gated per organization. A resource without any answers JSON
 * whatever the Accept, as before.
 */
export class ObjectRepresentations<E extends ResourceEntityBase> {
  /** Media types in the server's order of preference: JSON first. */
  readonly offered: readonly string[];
  private readonly promised: Readonly<Record<string, ObjectRepresentation>>;
  private readonly renderers: Readonly<Record<string, Renderer<E>>>;
  private readonly gate = new ConcurrencyGate(DOCUMENT_RENDERS_PER_ORGANIZATION, DOCUMENT_QUEUE_PER_ORGANIZATION);

  constructor(
    private readonly def: ResourceDefinition<E, unknown>,
    private readonly db: Pick<DataSource, 'query'>,
  ) {
    this.promised = representationsOf(def.resource);
    this.renderers = def.representations ?? {};
    const promised = Object.keys(this.promised).sort().join(', ');
    const rendered = Object.keys(this.renderers).sort().join(', ');
    if (promised !== rendered) {
      throw new Error(`${def.resource}: the manifest promises the representations [${promised}], the service renders [${rendered}]`);
    }
    this.offered = [JSON_TYPE, ...Object.keys(this.promised)];
  }

  /** Whether the resource has representations besides JSON (then every get varies by Accept). */
  get negotiated(): boolean {
    return this.offered.length > 1;
  }

  /**
   * The media type `accept` asks for, and the representations' query parameters as given (strings):
   * 400 for a value outside its schema, 406 for an Accept that allows none of them.
   */
  choose(accept: string | undefined, rawQuery: unknown): { type: string; query: Record<string, string> } {
    if (!this.negotiated) return { type: JSON_TYPE, query: {} };
    const query = this.checkQuery(rawQuery);
    const type = negotiate(accept, this.offered);
    if (type === null) {
      throw new ProblemException(406, `This ${this.def.kind} is available as ${this.offered.join(', ')}; the Accept header allows none of them.`);
    }
    return { type, query };
  }

  /**
   * The object as `type`, rendered by the definition with at most DOCUMENT_RENDERS_PER_ORGANIZATION
   * renders of the organization at once on this instance and DOCUMENT_QUEUE_PER_ORGANIZATION
   * waiting; past both, 429 (its own renders only: other organizations never wait behind them).
   */
  async render(entity: E, type: string, query: Record<string, string>, wanted: () => boolean = () => true): Promise<Represented> {
    const renderer = this.renderers[type];
    const admitted = this.gate.enter(entity.organizationId);
    if (!admitted) {
      throw new ProblemException(429, `Too many documents of this organization are being rendered; retry in 1 second.`, undefined, { 'Retry-After': '1' });
    }
    const release = await admitted;
    try {
      // Its turn came after its request was answered (the deadline) or abandoned: nothing to render for.
      if (!wanted()) throw new ProblemException(503, 'The request was answered before its document was rendered.');
      const body = await renderer(entity, { query, db: this.db, wanted });
      return { type, body, filename: this.filenameOf(entity, type) };
    } finally {
      release();
    }
  }

  /** The document's file name in `Content-Disposition`: the definition's name and the type's extension. */
  filenameOf(entity: E, type: string): string {
    return `${this.documentName(entity)}.${this.promised[type].extension}`;
  }

  private checkQuery(rawQuery: unknown): Record<string, string> {
    const given = (rawQuery ?? {}) as Record<string, unknown>;
    const query: Record<string, string> = {};
    for (const representation of Object.values(this.promised)) {
      for (const [name, schema] of Object.entries(representation.parameters ?? {})) {
        if (!Object.hasOwn(given, name)) continue;
        const value = given[name];
        const allowed = schema.enum as readonly string[] | undefined;
        if (typeof value !== 'string') throw new ProblemException(400, `The query parameter ${name} must be given once.`);
        if (allowed && !allowed.includes(value)) throw new ProblemException(400, `${name} must be one of ${allowed.join(', ')}.`);
        query[name] = value;
      }
    }
    return query;
  }

  /** The definition's name for the file, else the public id, reduced to characters safe in a header. */
  private documentName(entity: E): string {
    const name = this.def.documentName?.(entity) ?? '';
    const safe = name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100);
    return safe === '' || /^[._]+$/.test(safe) ? this.def.kind : safe;
  }
}
