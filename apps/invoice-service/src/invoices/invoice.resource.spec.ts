import { LIST_FILTERS, newId, parsePublicId } from '@invoicing/contracts';
import { checkListFilters, filterParser, listWhere } from '@invoicing/resource-api';
import { INVOICE_RESOURCE } from './invoice.resource';

const ORG = '11111111-1111-7111-8111-111111111111';
const filters = INVOICE_RESOURCE.filters ?? {};

/** The WHERE of a list query as the service writes it, each value parsed by the definition's own filter. */
function whereOf(query: Record<string, string>, startingAfter: string | null = null) {
  const given = Object.fromEntries(Object.entries(query).map(([name, text]) => [name, filterParser(filters[name]).parse(text)]));
  return listWhere(ORG, filters, given, startingAfter);
}

describe('invoice list filters', () => {
  it('are the manifest\'s, each reading the kind of value the document promises (the boot check)', () => {
    expect(() => checkListFilters('invoices', LIST_FILTERS.invoices, filters)).not.toThrow();
    expect(Object.keys(filters).sort()).toEqual(Object.keys(LIST_FILTERS.invoices).sort());
  });

  it('filter on several statuses at once, as one parameter', () => {
    expect(whereOf({ status: 'open,paid' })).toEqual({ where: 'organization_id = $1 AND "status" = ANY($2::text[])', values: [ORG, ['open', 'paid']] });
    expect(filterParser(filters.status).parse('open,closed')).toBeNull();
  });

  it('filter unpaid on amount_due as the view computes it, max(total - amount_paid, 0)', () => {
    expect(whereOf({ unpaid: 'true' }).where).toBe('organization_id = $1 AND (total - amount_paid > 0)');
    expect(whereOf({ unpaid: 'false' }).where).toBe('organization_id = $1 AND (total - amount_paid <= 0)');
  });

  it('bound issue and due dates, inclusive and exclusive, and combine everything with the cursor', () => {
    const after = newId('inv');
    expect(
      whereOf(
        { 'due_date[lt]': '2026-03-01', 'issue_date[gte]': '2026-01-01', 'issue_date[lte]': '2026-01-31', 'due_date[gt]': '2026-02-01', 'created[gt]': '2026-01-01T00:00:00+01:00', unpaid: 'true' },
        parsePublicId('inv', after),
      ),
    ).toEqual({
      where: [
        'organization_id = $1',
        '"created_at" > $2::timestamptz',
        '(total - amount_paid > 0)',
        '"issue_date" >= $3::date',
        '"issue_date" <= $4::date',
        '"due_date" > $5::date',
        '"due_date" < $6::date',
        'id < $7',
      ].join(' AND '),
      values: [ORG, '2025-12-31T23:00:00.000Z', '2026-01-01', '2026-01-31', '2026-02-01', '2026-03-01', parsePublicId('inv', after)],
    });
  });

  it('take the client as an id of a client only', () => {
    const client = newId('cli');
    expect(whereOf({ client_id: client }).values).toEqual([ORG, parsePublicId('cli', client)]);
    expect(filterParser(filters.client_id)).toMatchObject({ expected: 'a client id (cli_...)' });
    expect(filterParser(filters.client_id).parse(newId('inv'))).toBeNull();
  });
});
