import { Controller, Get, Header, HttpCode, Param, Patch, Post, Req, Res, UseGuards } from '@nestjs/common';
import { RESOURCES, SCOPE_ACTIONS } from '@invoicing/contracts';
import { compileBody } from '@invoicing/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CREATE_API_KEY_SCHEMA, CreateApiKeyRequest, ROLL_API_KEY_SCHEMA, RollApiKeyRequest, toPublicId } from '@invoicing/contracts';
import { CsrfGuard, CurrentUser, DashboardSessionGuard } from './dashboard.guards';
import type { DashboardUser } from './dashboard-sessions';
import { ApiKeysService, ApiKeyView } from '../keys/api-keys.service';
import { ApiKeyRevocationService } from '../revocation/api-key-revocation.service';
import { KeyRollService, RolledApiKey } from '../lifecycle/key-roll.service';
import { KeyUpdateService } from '../lifecycle/key-update.service';

const validateCreate = compileBody<CreateApiKeyRequest>(CREATE_API_KEY_SCHEMA);
const validateRoll = compileBody<RollApiKeyRequest>(ROLL_API_KEY_SCHEMA);

type CreatedApiKey = Pick<ApiKeyView, 'object' | 'id' | 'name' | 'client_id' | 'scopes' | 'status' | 'created_at' | 'expires_at' | 'allowed_ips'> & {
  client_secret: string;
};

/** Settings, then API: the organization's keys (docs/api.md section 9). Every call is scoped to the user's organization. */
@Controller('api/v1/settings')
@UseGuards(DashboardSessionGuard)
export class SettingsController {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly revocations: ApiKeyRevocationService,
    private readonly rolls: KeyRollService,
    private readonly updates: KeyUpdateService,
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
  ): Promise<CreatedApiKey> {
    const body = validateCreate(request.body);
    const { key, clientSecret } = await this.apiKeys.createKey(user.organizationId, body.name, body.scopes, new Date(), {
      expiresAt: body.expires_at,
      allowedIps: body.allowed_ips,
      actor: actorOf(user),
      address: request.ip,
    });
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
      expires_at: key.expires_at,
      allowed_ips: key.allowed_ips,
    };
  }

  /** The only call besides creation whose answer carries a `client_secret`: the new one. */
  @Post('api-keys/:id/roll')
  @HttpCode(200)
  @UseGuards(CsrfGuard)
  @Header('Cache-Control', 'no-store')
  roll(@CurrentUser() user: DashboardUser, @Param('id') id: string, @Req() request: FastifyRequest): Promise<RolledApiKey> {
    return this.rolls.roll(user.organizationId, id, validateRoll(request.body), { ...actorOf(user), address: request.ip });
  }

  @Patch('api-keys/:id')
  @UseGuards(CsrfGuard)
  update(@CurrentUser() user: DashboardUser, @Param('id') id: string, @Req() request: FastifyRequest): Promise<ApiKeyView> {
    return this.updates.update(user.organizationId, id, request.body, { ...actorOf(user), address: request.ip });
  }

  @Post('api-keys/:id/revoke')
  @HttpCode(200)
  @UseGuards(CsrfGuard)
  revoke(@CurrentUser() user: DashboardUser, @Param('id') id: string, @Req() request: FastifyRequest): Promise<ApiKeyView> {
    return this.revocations.revoke(user.organizationId, id, { ...actorOf(user), address: request.ip });
  }
}

/** The signed-in user as the audit log names an actor. */
export function actorOf(user: DashboardUser): { kind: 'user'; id: string } {
  return { kind: 'user', id: toPublicId('usr', user.userId) };
}
