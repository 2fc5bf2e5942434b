import { Controller, Get, Header, Query, UseGuards } from '@nestjs/common';
import { AUDIT_EVENT_TYPES } from '@invoicing/contracts';
import { ListParams } from '../common/list-params';
import { CurrentUser, DashboardSessionGuard } from '../settings/dashboard.guards';
import type { DashboardUser } from '../settings/dashboard-sessions';
import type { StoredAuditRecord } from './audit-chain';
import { AuditLog } from './audit-log';

/**
 * Settings → Audit log: the organization's records, newest first (Stripe list shape, cursor
 * `starting_after`, filters `type` and `api_key_id`, each given once: a repeated one is 400, not
 * dropped). Only the signed-in user's organization is ever read: the query's first condition is its
 * id, and a cursor of another organization ends the list rather than reading across.
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
    const params = new ListParams(query, ['limit', 'starting_after', 'type', 'api_key_id']);
    const limit = params.limit(20);
    const startingAfter = params.id('starting_after', 'evt', 'an audit event id');
    const type = params.oneOf('type', AUDIT_EVENT_TYPES);
    const apiKeyId = params.id('api_key_id', 'key', 'an API key id');
    params.check();
    const page = await this.audit.list(user.organizationId, { limit, startingAfter, type, apiKeyId });
    return { object: 'list', data: page.data.map((r) => ({ object: 'audit_event' as const, ...r })), has_more: page.hasMore };
  }
}
