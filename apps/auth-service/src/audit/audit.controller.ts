import { Controller, Get, Header, Query, UseGuards } from '@nestjs/common';
import { AUDIT_EVENT_TYPES, parsePublicId } from '@invoicing/contracts';
import { FieldError, ProblemException } from '@invoicing/service-kit';
import { CurrentUser, DashboardSessionGuard } from '../settings/dashboard.guards';
import type { DashboardUser } from '../settings/dashboard-sessions';
import type { StoredAuditRecord } from './audit-chain';
import { AuditLog } from './audit-log';

const KNOWN_TYPES: ReadonlySet<string> = new Set(AUDIT_EVENT_TYPES);

/**
 * Settings → Audit log: the organization's records, newest first (Stripe list shape, cursor
 * `starting_after`, filters `type` and `api_key_id`). Only the signed-in user's organization is
 * ever read: the query's first condition is its id, and a cursor of another organization ends the
 * list rather than reading across.
 */
@Controller('api/v1/settings/audit-events')
@UseGuards(DashboardSessionGuard)
export class AuditController {
  constructor(private readonly audit: AuditLog) {}

  @Get()
  @Header('Cache-Control', 'no-store')
  async list(
    @CurrentUser() user: DashboardUser,
    @Query() query: Record<string, unknown>,
  ): Promise<{ object: 'list'; data: Array<StoredAuditRecord & { object: 'audit_event' }>; has_more: boolean }> {
    const errors: FieldError[] = [];
    const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
    for (const name of Object.keys(query)) {
      if (!['limit', 'starting_after', 'type', 'api_key_id'].includes(name)) errors.push({ field: name, code: 'unknown_parameter', message: 'is not a parameter of this list' });
    }
    const limitText = text('limit');
    const limit = limitText === undefined ? 20 : /^\d{1,3}$/.test(limitText) ? Number(limitText) : NaN;
    if (!(limit >= 1 && limit <= 100)) errors.push({ field: 'limit', code: 'out_of_range', message: 'must be an integer from 1 to 100' });
    const startingAfter = text('starting_after');
    if (startingAfter !== undefined && !parsePublicId('evt', startingAfter)) errors.push({ field: 'starting_after', code: 'invalid_format', message: 'must be an audit event id (evt_...)' });
    const type = text('type');
    if (type !== undefined && !KNOWN_TYPES.has(type)) errors.push({ field: 'type', code: 'invalid_value', message: `must be one of ${AUDIT_EVENT_TYPES.join(', ')}` });
    const apiKeyId = text('api_key_id');
    if (apiKeyId !== undefined && !parsePublicId('key', apiKeyId)) errors.push({ field: 'api_key_id', code: 'invalid_format', message: 'must be an API key id (key_...)' });
    if (errors.length > 0) throw new ProblemException(400, 'The query has invalid parameters.', errors);
    const page = await this.audit.list(user.organizationId, { limit, startingAfter, type, apiKeyId });
    return { object: 'list', data: page.data.map((r) => ({ object: 'audit_event' as const, ...r })), has_more: page.hasMore };
  }
}
