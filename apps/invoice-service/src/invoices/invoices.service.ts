import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { newId, parsePublicId, toPublicId } from '@invoicing/contracts';
import {
  compileBody,
  FieldErrors,
  IdempotencyStore,
  IdempotentResult,
  OrgScope,
  Page,
  parseListQuery,
  toPage,
} from '@invoicing/resource-api';
import { ProblemException } from '@invoicing/service-kit';
import { DataSource, QueryFailedError } from 'typeorm';
import { calculateInvoice } from './invoice-calculation';
import { CREATE_INVOICE_SCHEMA, CreateInvoiceRequest } from './invoice.schema';
import { invoiceView, InvoiceView } from './invoice.view';
import { InvoiceFilters, InvoicesRepository } from './invoices.repository';

const validateCreate = compileBody<CreateInvoiceRequest>(CREATE_INVOICE_SCHEMA);
const STATUSES = new Set(['open', 'partially_paid', 'paid']);

function todayUtc(): string {
  return new Date().toISOString().slice(0, 10);
}

@Injectable()
export class InvoicesService {
  private readonly idempotency: IdempotencyStore;

  constructor(
    @InjectDataSource() db: DataSource,
    private readonly invoices: InvoicesRepository,
  ) {
    this.idempotency = new IdempotencyStore(db, 'invoices');
  }

  create(scope: OrgScope, body: unknown, idempotencyKey: string | undefined): Promise<IdempotentResult> {
    return this.idempotency.run(scope, idempotencyKey, 'POST /api/v1/invoices', body, async (tx) => {
      const request = validateCreate(body);
      const errors = new FieldErrors();
      const issueDate = request.issue_date ?? todayUtc();
      if (request.due_date !== undefined && request.due_date < issueDate) {
        errors.add('due_date', 'before_issue_date', 'must not be before issue_date');
      }
      const totals = calculateInvoice(request.line_items, errors);
      errors.throwIfAny();

      let number = request.number;
      if (number === undefined) {
        number = await this.invoices.nextNumber(tx, scope);
      } else if (await this.invoices.numberTaken(tx, scope, number)) {
        throw new ProblemException(409, `An invoice numbered ${number} already exists.`, [
          { field: 'number', code: 'duplicate', message: 'is already used by another invoice' },
        ]);
      }
      const id = parsePublicId('inv', newId('inv'))!;
      try {
        const invoice = await this.invoices.insert(tx, {
          id,
          organizationId: scope.organizationUuid,
          clientId: parsePublicId('cli', request.client_id)!,
          number,
          currency: request.currency,
          issueDate,
          dueDate: request.due_date ?? null,
          notes: request.notes ?? null,
          lineItems: totals.lines,
          subtotal: totals.subtotal,
          taxTotal: totals.taxTotal,
          total: totals.total,
          amountPaid: 0,
          createdAt: new Date(),
        });
        return { status: 201, body: invoiceView(invoice), location: `/api/v1/invoices/${toPublicId('inv', id)}` };
      } catch (e) {
        if (e instanceof QueryFailedError && (e as QueryFailedError & { code?: string }).code === '23505') {
          throw new ProblemException(409, `An invoice numbered ${number} already exists.`, [
            { field: 'number', code: 'duplicate', message: 'is already used by another invoice' },
          ]);
        }
        throw e;
      }
    });
  }

  async get(scope: OrgScope, publicId: string): Promise<InvoiceView> {
    const id = parsePublicId('inv', publicId);
    const invoice = id ? await this.invoices.findById(scope, id) : null;
    if (!invoice) throw ProblemException.notFound('invoice');
    return invoiceView(invoice);
  }

  async list(scope: OrgScope, rawQuery: unknown): Promise<Page<InvoiceView>> {
    const query = parseListQuery<InvoiceFilters>(rawQuery, 'inv', {
      client_id: (v) => parsePublicId('cli', v),
      status: (v) => (STATUSES.has(v) ? v : null),
    });
    return toPage(await this.invoices.list(scope, query), query.limit, invoiceView);
  }
}
