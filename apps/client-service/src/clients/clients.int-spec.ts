import { describeResourceContract } from '@invoicing/resource-api/testing';
import { CLIENT_SERVICE } from '../client-service.definition';

describeResourceContract({
  definition: CLIENT_SERVICE,
  validBody: async (_app, _org, n) => ({
    name: `Globex ${n}`,
    email: 'ap@globex.example',
    phone: '+1 555 0100',
    tax_id: 'US-123',
    address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'US' },
    currency: 'USD',
  }),
  invalid: {
    body: { email: 'nope', address: { line1: 'x', city: 'y', country: 'usa' }, currency: 'usd', extra: 1 },
    fields: ['name', 'email', 'address.country', 'currency', 'extra'],
  },
});
