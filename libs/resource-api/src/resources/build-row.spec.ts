import { orgScopeOf } from '../tenancy/org-scope';
import { buildRow } from './build-row';
import type { ResourceDefinition, ResourceEntityBase } from './resource-definition';

interface NoteEntity extends ResourceEntityBase {
  text: string;
}

describe(buildRow.name, () => {
  const scope = orgScopeOf({ organizationId: '11111111-1111-7111-8111-111111111111' });
  const now = new Date('2026-11-21T10:00:00.000Z');
  const context = { scope, input: { text: 'hi' }, id: '01930000-0000-7000-8000-000000000009', now } as never;

  it("sets the row's id, owner and creation time from the context, whatever the definition built", async () => {
    // A definition that (wrongly) names another organization: the caller's scope wins.
    const careless = {
      build: async ({ input }: { input: { text: string } }) => ({ text: input.text, organizationId: '22222222-2222-7222-8222-222222222222', id: 'x' }),
    } as unknown as ResourceDefinition<NoteEntity, { text: string }>;
    expect(await buildRow(careless, context)).toEqual({
      text: 'hi',
      id: '01930000-0000-7000-8000-000000000009',
      organizationId: '11111111-1111-7111-8111-111111111111',
      createdAt: now,
    });
  });
});
