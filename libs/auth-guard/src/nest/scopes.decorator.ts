import { SetMetadata } from '@nestjs/common';
import type { Scope } from '@invoicing/contracts';

export const SCOPES_METADATA = 'invoicing:required-scopes';

/** The scopes a handler requires (all of them). Checked by AccessTokenGuard. */
export const Scopes = (...scopes: Scope[]) => SetMetadata(SCOPES_METADATA, scopes);
