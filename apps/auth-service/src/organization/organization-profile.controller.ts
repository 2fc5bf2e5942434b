import { Controller, Get, Header, Patch, Req, UseGuards } from '@nestjs/common';
import type { OrganizationProfile } from '@invoicing/contracts';
import type { FastifyRequest } from 'fastify';
import { CsrfGuard, CurrentUser, DashboardSessionGuard } from '../settings/dashboard.guards';
import type { DashboardUser } from '../settings/dashboard-sessions';
import { actorOf } from '../settings/settings.controller';
import { OrganizationProfileService } from './organization-profile.service';

/**
 * Settings → Organization (docs/api.md section 9, ADR 0039): the signed-in user's organization's
 * profile. Guarded like the other settings routes: a session on every call, CSRF on the change.
 * Never cached: the answer holds the IBAN.
 */
@Controller('api/v1/settings')
@UseGuards(DashboardSessionGuard)
export class OrganizationProfileController {
  constructor(private readonly profiles: OrganizationProfileService) {}

  @Get('organization')
  @Header('Cache-Control', 'no-store')
  get(@CurrentUser() user: DashboardUser): Promise<OrganizationProfile> {
    return this.profiles.get(user.organizationId);
  }

  @Patch('organization')
  @UseGuards(CsrfGuard)
  @Header('Cache-Control', 'no-store')
  update(@CurrentUser() user: DashboardUser, @Req() request: FastifyRequest): Promise<OrganizationProfile> {
    return this.profiles.update(user.organizationId, request.body, { ...actorOf(user), address: request.ip });
  }
}
