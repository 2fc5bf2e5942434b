import { CreateClientRequest, toPublicId } from '@invoicing/contracts';
import { defineResource } from '@invoicing/resource-api';
import { ClientEntity } from './client.entity';

export const CLIENT_RESOURCE = defineResource<ClientEntity, CreateClientRequest>('clients', {
  entity: ClientEntity,

  async build({ input }) {
    return Object.assign(new ClientEntity(), {
      name: input.name,
      email: input.email ?? null,
      phone: input.phone ?? null,
      taxId: input.tax_id ?? null,
      address: input.address ?? null,
      currency: input.currency ?? null,
    });
  },

  view: (c) => ({
    object: 'client',
    id: toPublicId('cli', c.id),
    created_at: c.createdAt.toISOString(),
    name: c.name,
    email: c.email,
    phone: c.phone,
    tax_id: c.taxId,
    address: c.address
      ? {
          line1: c.address.line1,
          line2: c.address.line2 ?? null,
          city: c.address.city,
          postal_code: c.address.postal_code ?? null,
          region: c.address.region ?? null,
          country: c.address.country,
        }
      : null,
    currency: c.currency,
  }),
});
