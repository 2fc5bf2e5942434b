import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { ProblemException } from '@invoicing/service-kit';
import type { IncomingHttpHeaders } from 'node:http';
import { ServiceCaller, ServiceCredentials } from './service-credential';

/** Built once: the refusal is the same for every caller, and says nothing about why. */
const REFUSED = new ProblemException(401, 'This route answers other services of the platform only, with a service credential.', undefined, {
  'WWW-Authenticate': 'Bearer realm="internal"',
});

/**
 * Admits a request carrying a service credential this service accepts (ServiceCredentials), and
 * nothing else: no access token of any tenant, whatever its scopes or addresses. The caller it
 * admits is the organization the credential names, for `@Req().serviceCaller`.
 */
@Injectable()
export class ServiceCredentialGuard implements CanActivate {
  constructor(private readonly credentials: ServiceCredentials) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.getArgByIndex<{ headers: IncomingHttpHeaders; serviceCaller?: ServiceCaller }>(0);
    const header = request.headers.authorization;
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : null;
    const caller = token === null ? null : this.credentials.verify(token);
    if (!caller) throw REFUSED;
    request.serviceCaller = caller;
    return true;
  }
}
