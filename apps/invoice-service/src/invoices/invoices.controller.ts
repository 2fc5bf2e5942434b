import { Controller, Get, Headers, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { AccessTokenGuard, Caller, CallerIdentity, Scopes } from '@invoicing/auth-guard';
import { orgScopeOf, sendCreated } from '@invoicing/resource-api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvoicesService } from './invoices.service';

@Controller('api/v1/invoices')
@UseGuards(AccessTokenGuard)
export class InvoicesController {
  constructor(private readonly invoices: InvoicesService) {}

  @Post()
  @Scopes('write:invoices')
  async create(
    @Caller() caller: CallerIdentity,
    @Req() request: FastifyRequest,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    return sendCreated(reply, await this.invoices.create(orgScopeOf(caller), request.body, idempotencyKey));
  }

  @Get()
  @Scopes('read:invoices')
  list(@Caller() caller: CallerIdentity, @Query() query: unknown) {
    return this.invoices.list(orgScopeOf(caller), query);
  }

  @Get(':id')
  @Scopes('read:invoices')
  get(@Caller() caller: CallerIdentity, @Param('id') id: string) {
    return this.invoices.get(orgScopeOf(caller), id);
  }
}
