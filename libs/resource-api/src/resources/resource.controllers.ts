import { Controller, Get, Headers, Inject, Param, Post, Query, Req, Res, Type, UseGuards } from '@nestjs/common';
import { AccessTokenGuard, Caller, CallerIdentity, Scopes } from '@invoicing/auth-guard';
import { representationsOf, type Resource, type Scope } from '@invoicing/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendCreated } from '../idempotency/send-created';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard';
import type { ServiceCaller } from '../references/service-credential';
import { ServiceCredentialGuard } from '../references/service-credential.guard';
import { orgScopeOf } from '../tenancy/org-scope';
import type { ResourceEntityBase } from './resource-definition';
import type { ResourceService } from './resource.service';

/** Injection token of a resource service's generic ResourceService. */
export const RESOURCE_SERVICE = Symbol('RESOURCE_SERVICE');

/** The public endpoints of a resource (docs/api.md section 7): thin, everything is in ResourceService. */
export function resourceController(resource: Resource): Type<unknown> {
  class ResourceEndpoints {
    constructor(@Inject(RESOURCE_SERVICE) readonly service: ResourceService<ResourceEntityBase, unknown>) {}

    @Post()
    @Scopes(`write:${resource}` as Scope)
    async create(
      @Caller() caller: CallerIdentity,
      @Req() request: FastifyRequest,
      @Headers('idempotency-key') idempotencyKey: string | undefined,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<unknown> {
      return sendCreated(reply, await this.service.create(caller, request.body, idempotencyKey));
    }

    @Get()
    @Scopes(`read:${resource}` as Scope)
    list(@Caller() caller: CallerIdentity, @Query() query: unknown) {
      return this.service.list(caller, query);
    }
  }

  /** JSON only: the get reads no header and no query (the hot path as it was). */
  @Controller(`api/v1/${resource}`)
  @UseGuards(AccessTokenGuard, RateLimitGuard)
  class JsonResourceController extends ResourceEndpoints {
    @Get(':id')
    @Scopes(`read:${resource}` as Scope)
    get(@Caller() caller: CallerIdentity, @Param('id') id: string) {
      return this.service.get(caller, id);
    }
  }

  /** With representations besides JSON (the manifest's): the get negotiates by Accept. */
  @Controller(`api/v1/${resource}`)
  @UseGuards(AccessTokenGuard, RateLimitGuard)
  class NegotiatedResourceController extends ResourceEndpoints {
    @Get(':id')
    @Scopes(`read:${resource}` as Scope)
    async get(
      @Caller() caller: CallerIdentity,
      @Param('id') id: string,
      @Headers('accept') accept: string | undefined,
      @Query() query: unknown,
      @Req() request: FastifyRequest,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<unknown> {
      // Vary: Accept is set on every answer of this route, errors included (resourceVaryHook).
      const answer = await this.service.represent(caller, id, accept, query, {
        head: request.method === 'HEAD',
        // Past the request's deadline (it has been answered 503) or once the caller left, a document
        // still waiting for its turn is not rendered.
        wanted: () => !reply.sent && !reply.raw.destroyed,
      });
      if ('object' in answer) return answer.object;
      reply.type(answer.type);
      reply.header('Content-Disposition', `inline; filename="${answer.filename}"`);
      return 'body' in answer ? answer.body : '';
    }
  }

  const controller = Object.keys(representationsOf(resource)).length > 0 ? NegotiatedResourceController : JsonResourceController;
  Object.defineProperty(controller, 'name', { value: `${resource[0].toUpperCase()}${resource.slice(1)}Controller` });
  return controller;
}

/**
 * `GET /internal/v1/objects/:id`, asked by other services that reference this one's objects when
 * their read model has not caught up (ADR 0012). Not routed by the gateway or the Ingress, and
 * answered only to a service credential of a service that references this one's objects, confined
 * to the organization it names; a tenant's access token is refused here, whatever it carries.
 */
@Controller('internal/v1/objects')
@UseGuards(ServiceCredentialGuard)
export class InternalObjectsController {
  constructor(@Inject(RESOURCE_SERVICE) private readonly service: ResourceService<ResourceEntityBase, unknown>) {}

  @Get(':id')
  get(@Req() request: { serviceCaller: ServiceCaller }, @Param('id') id: string) {
    return this.service.getIn(orgScopeOf(request.serviceCaller), id);
  }
}
