// Generated from the platform manifest's resources (RESOURCE_MANIFEST) and the OpenAPI document's
// operations and schemas (libs/sdk/scripts/generate-types.ts). Do not edit: run `npx nx run sdk:generate`.

import type { ResourceName } from './resources';

/** Every resource of the API, in the platform manifest's order: `Invoicing` has a property of each. */
export const RESOURCE_NAMES = ['invoices', 'clients', 'payments', 'products', 'expenses'] as const satisfies readonly ResourceName[];
