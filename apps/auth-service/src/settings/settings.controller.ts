import { Controller, Get, Header, HttpCode, Param, Patch, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { RESOURCES, SCOPE_ACTIONS, WEBHOOK_ENDPOINTS } from '@invoicing/contracts';
import { compileBody } from '@invoicing/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CREATE_API_KEY_SCHEMA, CreateApiKeyRequest, ROLL_API_KEY_SCHEMA, RollApiKeyRequest, toPublicId } from '@invoicing/contracts';
import { CsrfGuard, CurrentUser, DashboardSessionGuard } from './dashboard.guards';
import type { DashboardUser } from './dashboard-sessions';
import { ApiKeysService, ApiKeyView } from '../keys/api-keys.service';
import { ApiKeyRevocationService } from '../revocation/api-key-revocation.service';
import { KeyRollService, RolledApiKey } from '../lifecycle/key-roll.service';
import { KeyUpdateService } from '../lifecycle/key-update.service';
import { KeyChangeLimit } from '../lifecycle/key-change-limit';
import { ListParams } from '../common/list-params';

const validateCreate = compileBody<CreateApiKeyRequest>(CREATE_API_KEY_SCHEMA);
const validateRoll = compileBody<RollApiKeyRequest>(ROLL_API_KEY_SCHEMA);

const KEY_STATUSES = ['active', 'revoked', 'expired'] as const;
/** The largest page: the live keys of an organization at the default ceiling fit in two. */
const KEY_PAGE_DEFAULT = 100;

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
    private readonly limit: KeyChangeLimit,
  ) {}

  @Get('scopes')
  scopes() {
    return { data: [...RESOURCES, WEBHOOK_ENDPOINTS].map((resource) => ({ resource, scopes: SCOPE_ACTIONS.map((a) => `${a}:${resource}`) })) };
  }

  /**
   * A page of keys, by default the live ones only (docs/api.md section 9): at most
   * MAX_LIVE_KEYS_PER_ORGANIZATION of them, so however many revoked or expired keys pile up, none
   * can push a live key out of sight. Revoked and expired keys are asked for by `status`.
   */
  @Get('api-keys')
  @Header('Cache-Control', 'no-store')
  async list(@CurrentUser() user: DashboardUser, @Query() query: Record<string, unknown>) {
    const params = new ListParams(query, ['limit', 'starting_after', 'status']);
    const limit = params.limit(KEY_PAGE_DEFAULT);
    const startingAfter = params.id('starting_after', 'key', 'an API key id');
    const statuses = params.someOf('status', KEY_STATUSES) ?? ['active'];
    params.check();
    const page = await this.apiKeys.listForOrganization(user.organizationId, { limit, startingAfter, statuses });
    return { object: 'list', data: page.data, has_more: page.hasMore };
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
      // Spent once the request is known to be valid: a refused body costs no budget.
      admit: () => this.limit.spend(user.organizationId, 'creations'),
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
