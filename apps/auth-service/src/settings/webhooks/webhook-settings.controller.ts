import { Controller, Delete, Get, Param, Patch, Post, Req, Res, UseGuards } from '@nestjs/common';
import { WEBHOOK_EVENT_CATALOGUE, WEBHOOK_EVENT_TYPES } from '@invoicing/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CsrfGuard, CurrentUser, DashboardSessionGuard } from '../dashboard.guards';
import type { DashboardUser } from '../dashboard-sessions';
import { WebhookSettingsProxy } from './webhook-settings.proxy';

/**
 * Settings → Webhooks (docs/api.md section 9, ADR 0038): the organization's webhook endpoints,
 * managed with the settings session. Each route is one call of the webhook service's endpoints API
 * (docs/api.md section 15), forwarded by WebhookSettingsProxy with a short-lived access token the
 * browser never sees. Guarded like the API-key routes: a session on every call, CSRF on every write.
 */
@Controller('api/v1/settings')
@UseGuards(DashboardSessionGuard)
export class WebhookSettingsController {
  constructor(private readonly proxy: WebhookSettingsProxy) {}

  /** The event types an endpoint can ask for (for the page's checklist); answered here, not forwarded. */
  @Get('webhook-event-types')
  eventTypes() {
    return { data: WEBHOOK_EVENT_TYPES.map((type) => ({ type, description: WEBHOOK_EVENT_CATALOGUE[type].description })) };
  }

  @Get('webhook-endpoints')
  list(@CurrentUser() user: DashboardUser, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.proxy.forward('list', user, request, reply);
  }

  /** The answer carries the endpoint's signing secret, shown this once. */
  @Post('webhook-endpoints')
  @UseGuards(CsrfGuard)
  create(@CurrentUser() user: DashboardUser, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.proxy.forward('create', user, request, reply);
  }

  @Get('webhook-endpoints/:id')
  get(@CurrentUser() user: DashboardUser, @Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.proxy.forward('get', user, request, reply, id);
  }

  @Patch('webhook-endpoints/:id')
  @UseGuards(CsrfGuard)
  update(@CurrentUser() user: DashboardUser, @Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.proxy.forward('update', user, request, reply, id);
  }

  @Delete('webhook-endpoints/:id')
  @UseGuards(CsrfGuard)
  remove(@CurrentUser() user: DashboardUser, @Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.proxy.forward('delete', user, request, reply, id);
  }

  /** The answer carries the endpoint's new signing secret. */
  @Post('webhook-endpoints/:id/roll-secret')
  @UseGuards(CsrfGuard)
  rollSecret(@CurrentUser() user: DashboardUser, @Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.proxy.forward('roll-secret', user, request, reply, id);
  }

  @Post('webhook-endpoints/:id/test')
  @UseGuards(CsrfGuard)
  test(@CurrentUser() user: DashboardUser, @Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.proxy.forward('test', user, request, reply, id);
  }

  @Get('webhook-endpoints/:id/attempts')
  attempts(@CurrentUser() user: DashboardUser, @Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.proxy.forward('attempts', user, request, reply, id);
  }

  @Post('webhook-endpoints/:id/replay')
  @UseGuards(CsrfGuard)
  replay(@CurrentUser() user: DashboardUser, @Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.proxy.forward('replay', user, request, reply, id);
  }
}
