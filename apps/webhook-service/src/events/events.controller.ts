import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { AccessTokenGuard, Caller, CallerIdentity, Scopes } from '@invoicing/auth-guard';
import { EventsService } from './events.service';

/**
 * `/api/v1/events`: the organization's events of the last 30 days, each visible to a token holding
 * `read:` of its resource (EventsService checks it per event: no one scope covers them all).
 */
@Controller('api/v1/events')
@UseGuards(AccessTokenGuard)
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  list(@Caller() caller: CallerIdentity, @Query() query: unknown) {
    return this.events.list(caller, query);
  }

  @Get(':id')
  get(@Caller() caller: CallerIdentity, @Param('id') id: string) {
    return this.events.get(caller, id);
  }

  @Post(':id/resend')
  @HttpCode(202)
  @Scopes('write:webhook_endpoints')
  resend(@Caller() caller: CallerIdentity, @Param('id') id: string, @Body() body: unknown) {
    return this.events.resend(caller, id, body);
  }
}
