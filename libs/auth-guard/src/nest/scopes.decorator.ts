import { SetMetadata } from '@nestjs/common';
import type { Scope } from '@invoicing/contracts';

export const SCOPES_METADATA = 'invoicing:required-scopes';

/** The scopes a handler requires (all of them). Checked by AccessTokenGuard. */
export const Scopes = (...scopes: Scope[]) => SetMetadata(SCOPES_METADATA, scopes);

export const SERVICE_TO_SERVICE_METADATA = 'invoicing:service-to-service';

/**
 * A route only other services of the platform call, with the token of the request they are
 * serving (not routed by the gateway or the Ingress). The key's IP allowlist is not checked here:
 * the service that received the client's request checked it against the client's address, and the
 * caller here is that service, whose address no allowlist names.
 */
export const ServiceToService = () => SetMetadata(SERVICE_TO_SERVICE_METADATA, true);
