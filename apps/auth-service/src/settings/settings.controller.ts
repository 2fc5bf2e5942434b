import { Controller, Get, Header, HttpCode, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import { RESOURCES, SCOPE_ACTIONS } from '@invoicing/contracts';
import { compileBody } from '@invoicing/service-kit';
import { ProblemException } from '@invoicing/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CREATE_API_KEY_SCHEMA, CreateApiKeyRequest } from '@invoicing/contracts';
import { CsrfGuard, CurrentUser, DashboardSessionGuard } from './dashboard.guards';
import type { DashboardUser } from './dashboard-sessions';
import { ApiKeysService, ApiKeyView, InvalidApiKeyInput } from '../keys/api-keys.service';
import { ApiKeyRevocationService } from '../revocation/api-key-revocation.service';

const validateCreate = compileBody<CreateApiKeyRequest>(CREATE_API_KEY_SCHEMA);

/** Settings, then API: the organization's keys (contract section 9). Every call is scoped to the user's organization. */
@Controller('api/v1/settings')
@UseGuards(DashboardSessionGuard)
export class SettingsController {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly revocations: ApiKeyRevocationService,
  ) {}

  @Get('scopes')
  scopes() {
    return { data: RESOURCES.map((resource) => ({ resource, scopes: SCOPE_ACTIONS.map((a) => `${a}:${resource}`) })) };
  }

  @Get('api-keys')
  @Header('Cache-Control', 'no-store')
  async list(@CurrentUser() user: DashboardUser) {
    return { object: 'list', data: await this.apiKeys.listForOrganization(user.organizationId), has_more: false };
  }

  /** The only response that ever carries `client_secret`. */
  @Post('api-keys')
  @UseGuards(CsrfGuard)
  @Header('Cache-Control', 'no-store')
  async create(
    @CurrentUser() user: DashboardUser,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Omit<ApiKeyView, 'organization_id' | 'last_used_at' | 'revoked_at'> & { client_secret: string }> {
    const body = validateCreate(request.body);
    try {
      const { key, clientSecret } = await this.apiKeys.createKey(user.organizationId, body.name, body.scopes);
      void reply.status(201).header('Location', `/api/v1/settings/api-keys/${key.id}`);
      return {
        object: 'api_key',
        id: key.id,
        name: key.name,
        client_id: key.client_id,
        client_secret: clientSecret,
        scopes: key.scopes,
        status: key.status,
        created_at: key.created_at,
      };
    } catch (e) {
      if (e instanceof InvalidApiKeyInput) throw ProblemException.validation([{ field: e.field, code: e.code, message: e.message }]);
      throw e;
    }
  }

  @Post('api-keys/:id/revoke')
  @HttpCode(200)
  @UseGuards(CsrfGuard)
  revoke(@CurrentUser() user: DashboardUser, @Param('id') id: string): Promise<ApiKeyView> {
    return this.revocations.revoke(user.organizationId, id);
  }
}
