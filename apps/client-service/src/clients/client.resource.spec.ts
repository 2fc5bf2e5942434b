import { buildRow, orgScopeOf } from '@invoicing/resource-api';
import { CLIENT_RESOURCE } from './client.resource';

const scope = orgScopeOf({ organizationId: '11111111-1111-7111-8111-111111111111' });
const context = (input: Record<string, unknown>) =>
  ({ scope, input, id: '01930000-0000-7000-8000-000000000001', now: new Date('2026-11-21T10:00:00.123Z') }) as never;

describe('client resource', () => {
  it('stores optional fields as null and shows the address with every key', async () => {
    const entity = await buildRow(CLIENT_RESOURCE, context({ name: 'Globex', address: { line1: '1 Main St', city: 'Springfield', country: 'US' } }));
    expect(CLIENT_RESOURCE.view(entity)).toEqual({
      object: 'client',
      id: 'cli_01930000000070008000000000000001',
      created_at: '2026-11-21T10:00:00.123Z',
      name: 'Globex',
      email: null,
      phone: null,
      tax_id: null,
      address: { line1: '1 Main St', line2: null, city: 'Springfield', postal_code: null, region: null, country: 'US' },
      currency: null,
    });
  });
});
