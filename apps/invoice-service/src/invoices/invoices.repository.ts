import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { ListQuery, OrgScope } from '@invoicing/resource-api';
import { DataSource, EntityManager } from 'typeorm';
import { InvoiceEntity } from './invoice.entity';

export type InvoiceFilters = 'client_id' | 'status';

/** Invoice storage. Every method takes the caller's OrgScope: there is no unscoped query. */
@Injectable()
export class InvoicesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(tx: EntityManager, invoice: Omit<InvoiceEntity, 'status'>): Promise<InvoiceEntity> {
    await tx.getRepository(InvoiceEntity).insert(invoice);
    return (await tx.getRepository(InvoiceEntity).findOneByOrFail({ id: invoice.id }));
  }

  /**
   * Next number of the organization's sequence. The counter row is locked until the transaction
   * ends, so concurrent creates in one organization get distinct numbers.
   */
  async nextNumber(tx: EntityManager, scope: OrgScope): Promise<string> {
    for (;;) {
      const rows: Array<{ last_value: string }> = await tx.query(
        `INSERT INTO invoices.invoice_number_counters AS c (organization_id, last_value) VALUES ($1, 1)
         ON CONFLICT (organization_id) DO UPDATE SET last_value = c.last_value + 1
         RETURNING last_value`,
        [scope.organizationUuid],
      );
      const candidate = `INV-${rows[0].last_value.padStart(6, '0')}`;
      // Skip numbers a caller chose explicitly.
      if (!(await this.numberTaken(tx, scope, candidate))) return candidate;
    }
  }

  async numberTaken(tx: EntityManager, scope: OrgScope, number: string): Promise<boolean> {
    const rows: unknown[] = await tx.query(
      `SELECT 1 FROM invoices.invoices WHERE organization_id = $1 AND number = $2`,
      [scope.organizationUuid, number],
    );
    return rows.length > 0;
  }

  findById(scope: OrgScope, id: string): Promise<InvoiceEntity | null> {
    return this.db.getRepository(InvoiceEntity).findOneBy({ id, organizationId: scope.organizationUuid });
  }

  /** Newest first; `limit + 1` rows so the caller can tell whether there is more. */
  list(scope: OrgScope, query: ListQuery<InvoiceFilters>): Promise<InvoiceEntity[]> {
    const qb = this.db
      .getRepository(InvoiceEntity)
      .createQueryBuilder('i')
      .where('i.organization_id = :org', { org: scope.organizationUuid });
    if (query.filters.client_id) qb.andWhere('i.client_id = :client', { client: query.filters.client_id });
    if (query.filters.status) qb.andWhere('i.status = :status', { status: query.filters.status });
    if (query.startingAfter) qb.andWhere('i.id < :after', { after: query.startingAfter });
    return qb.orderBy('i.id', 'DESC').limit(query.limit + 1).getMany();
  }
}
