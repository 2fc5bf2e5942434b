import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, UseGuards } from '@nestjs/common';
import { AccessTokenGuard, Caller, CallerIdentity, Scopes } from '@invoicing/auth-guard';
import { EndpointsService } from './endpoints.service';

/** `/api/v1/webhook-endpoints` (docs/api.md, Webhooks): thin, everything is in EndpointsService. */
@Controller('api/v1/webhook-endpoints')
@UseGuards(AccessTokenGuard)
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Post()
  @Scopes('write:webhook_endpoints')
  create(@Caller() caller: CallerIdentity, @Body() body: unknown) {
    return this.endpoints.create(caller, body);
  }

  @Get()
  @Scopes('read:webhook_endpoints')
  list(@Caller() caller: CallerIdentity, @Query() query: unknown) {
    return this.endpoints.list(caller, query);
  }

  @Get(':id')
  @Scopes('read:webhook_endpoints')
  get(@Caller() caller: CallerIdentity, @Param('id') id: string) {
    return this.endpoints.get(caller, id);
  }

  @Patch(':id')
  @Scopes('write:webhook_endpoints')
  update(@Caller() caller: CallerIdentity, @Param('id') id: string, @Body() body: unknown) {
    return this.endpoints.update(caller, id, body);
  }

  @Delete(':id')
  @Scopes('write:webhook_endpoints')
  remove(@Caller() caller: CallerIdentity, @Param('id') id: string) {
    return this.endpoints.remove(caller, id);
  }

  @Post(':id/roll-secret')
  @HttpCode(200)
  @Scopes('write:webhook_endpoints')
  rollSecret(@Caller() caller: CallerIdentity, @Param('id') id: string) {
    return this.endpoints.rollSecret(caller, id);
  }

  @Post(':id/test')
  @HttpCode(202)
  @Scopes('write:webhook_endpoints')
  test(@Caller() caller: CallerIdentity, @Param('id') id: string) {
    return this.endpoints.sendTest(caller, id);
  }

  @Get(':id/attempts')
  @Scopes('read:webhook_endpoints')
  attempts(@Caller() caller: CallerIdentity, @Param('id') id: string, @Query() query: unknown) {
    return this.endpoints.attempts(caller, id, query);
  }

  @Post(':id/replay')
  @HttpCode(202)
  @Scopes('write:webhook_endpoints')
  replay(@Caller() caller: CallerIdentity, @Param('id') id: string, @Body() body: unknown) {
    return this.endpoints.replay(caller, id, body);
  }
}
