import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { moneyColumn } from '../money/arithmetic';
import { EntityReader, MAX_NAMED_STATEMENTS } from './entity-reader';

@Entity({ schema: 'spec', name: 'things' })
class Thing {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('bigint', { transformer: moneyColumn })
  amount!: number;
}

const ORG_A = '00000000-0000-7000-8000-00000000000a';
const ORG_B = '00000000-0000-7000-8000-00000000000b';
const ORG_C = '00000000-0000-7000-8000-00000000000c';
const ROW_A = '00000000-0000-7000-8000-0000000000a1';
const ROW_B = '00000000-0000-7000-8000-0000000000b1';
const ROW_C = '00000000-0000-7000-8000-0000000000c1';

/**
 * TypeORM's metadata of {@link Thing}, built without a connection, and a pool that answers every
 * batched statement with `answer`: the reader's batching is what is under test, not Postgres.
 */
async function readerWith(answer: () => Promise<{ rows: Array<Record<string, unknown>> }>) {
  const db = new DataSource({ type: 'postgres', entities: [Thing] });
  await (db as unknown as { buildMetadatas(): Promise<void> }).buildMetadatas();
  const statements: unknown[] = [];
  (db.driver as unknown as { master: unknown }).master = {
    query: (statement: unknown) => {
      statements.push(statement);
      return answer();
    },
  };
  return { reader: new EntityReader(db, Thing), statements };
}

const settled = <T>(p: Promise<T>) => p.then((value) => ({ value }), (error: unknown) => ({ error }));

describe(EntityReader.name, () => {
  it('fails only the callers of a row that cannot be hydrated; the rest of the batch gets its own answers', async () => {
    // The row out of range comes first, as Postgres may send it: nothing after it may be dropped.
    const { reader, statements } = await readerWith(async () => ({
      rows: [
        { id: ROW_B, organization_id: ORG_B, amount: '9007199254740993' },
        { id: ROW_A, organization_id: ORG_A, amount: '125' },
      ],
    }));
    const a = settled(reader.byIdInOrganization(ROW_A, ORG_A));
    const b1 = settled(reader.byIdInOrganization(ROW_B, ORG_B));
    const b2 = settled(reader.byIdInOrganization(ROW_B, ORG_B));
    const c = settled(reader.byIdInOrganization(ROW_C, ORG_C));
    const outcome = await Promise.race([
      Promise.all([a, b1, b2, c]),
      new Promise((resolve) => setTimeout(() => resolve('some caller was never answered'), 1000)),
    ]);
    expect(statements).toHaveLength(1);
    expect(outcome).not.toBe('some caller was never answered');
    const [ra, rb1, rb2, rc] = outcome as Array<{ value?: Thing | null; error?: Error }>;
    expect(ra.value).toMatchObject({ id: ROW_A, organizationId: ORG_A, amount: 125 });
    expect(rb1.error).toBeInstanceOf(RangeError);
    expect(rb2.error).toBeInstanceOf(RangeError);
    expect(rc).toEqual({ value: null });
  });

  it('gives every caller of one row an entity of its own', async () => {
    const { reader } = await readerWith(async () => ({ rows: [{ id: ROW_A, organization_id: ORG_A, amount: '7' }] }));
    const [first, second] = await Promise.all([reader.byIdInOrganization(ROW_A, ORG_A), reader.byIdInOrganization(ROW_A, ORG_A)]);
    expect(first).toEqual(second);
    expect(first).not.toBe(second);
  });

  it('fails every caller of the batch when the statement fails, as each would have failed alone', async () => {
    const { reader } = await readerWith(() => Promise.reject(new Error('Connection terminated')));
    const results = await Promise.all([settled(reader.byIdInOrganization(ROW_A, ORG_A)), settled(reader.byIdInOrganization(ROW_B, ORG_B))]);
    expect(results.map((r) => (r as { error?: Error }).error?.message)).toEqual(['Connection terminated', 'Connection terminated']);
  });

  it('prepares at most MAX_NAMED_STATEMENTS texts by name; further ones run unnamed, and the first ones keep their names', async () => {
    const { reader, statements } = await readerWith(async () => ({ rows: [] }));
    // Each filter combination a caller tries is a text of its own.
    for (let i = 0; i < MAX_NAMED_STATEMENTS + 50; i++) await reader.many(`organization_id = $1 AND amount > ${i}`, [ORG_A]);
    await reader.many('organization_id = $1 AND amount > 0', [ORG_A]);
    const named = (statements as Array<{ name?: string }>).map((s) => s.name);
    expect(new Set(named.slice(0, MAX_NAMED_STATEMENTS)).size).toBe(MAX_NAMED_STATEMENTS);
    expect(named.slice(MAX_NAMED_STATEMENTS, MAX_NAMED_STATEMENTS + 50).every((name) => name === undefined)).toBe(true);
    expect(named[named.length - 1]).toBe(named[0]);
  });
});
