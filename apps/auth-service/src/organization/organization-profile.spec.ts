import { newId, ORGANIZATION_PROFILE_CHANGED_V1, parsePublicId, validateDomainEvent, validateDomainTopicEvent } from '@invoicing/contracts';
import { applyPatch, auditDataOf, changedFields, EMPTY_PROFILE, ibanLast4, profileChangedEvent, profileView, StoredProfile } from './organization-profile';
import type { ProfileValues } from './profile-fields';

/** A new organization's uuid. */
const newOrganization = () => parsePublicId('org', newId('org')) as string;
const ORG = newOrganization();
const IBAN = 'DE89370400440532013000';
const OTHER_IBAN = 'FR1420041010050500013M02606';
const ADDRESS = { line1: '1 rue de la Paix', line2: null, city: 'Paris', postal_code: '75002', region: null, country: 'FR' };

const stored = (values: Partial<ProfileValues>, version = 1): StoredProfile => ({
  ...EMPTY_PROFILE,
  ...values,
  version,
  updatedAt: new Date('2026-11-24T10:00:00.123Z'),
});

describe(profileView.name, () => {
  it('answers every field null, version 0 and updated_at null for an organization that never set a profile', () => {
    expect(profileView(ORG, EMPTY_PROFILE)).toEqual({
      object: 'organization_profile',
      organization_id: `org_${ORG.replace(/-/g, '')}`,
      legal_name: null,
      address: null,
      vat_id: null,
      email: null,
      iban: null,
      bic: null,
      payment_terms: null,
      version: 0,
      updated_at: null,
    });
  });

  it('gives the address every key in the API\'s order, whatever order the store kept them in', () => {
    const fromJsonb = { city: 'Paris', line1: '1 rue de la Paix', country: 'FR', postal_code: '75002' } as unknown as ProfileValues['address'];
    const view = profileView(ORG, stored({ address: fromJsonb }));
    expect(Object.keys(view.address ?? {})).toEqual(['line1', 'line2', 'city', 'postal_code', 'region', 'country']);
    expect(view.address).toEqual(ADDRESS);
    expect(view.updated_at).toBe('2026-11-24T10:00:00.123Z');
  });
});

describe(changedFields.name, () => {
  const current = stored({ legal_name: 'Acme', address: ADDRESS, iban: IBAN });

  it('names the fields the patch gives another value, in the profile\'s order', () => {
    expect(changedFields(current, { iban: OTHER_IBAN, legal_name: 'Acme SARL' })).toEqual(['legal_name', 'iban']);
    expect(changedFields(current, { address: { ...ADDRESS, line2: 'Bâtiment B' } })).toEqual(['address']);
    expect(changedFields(current, { address: null, bic: null, vat_id: 'FR40303265045' })).toEqual(['address', 'vat_id']);
  });

  it('names none when the patch sends the values already there, an address equal key by key, or nulls of empty fields', () => {
    expect(changedFields(current, {})).toEqual([]);
    expect(changedFields(current, { legal_name: 'Acme', iban: IBAN, email: null })).toEqual([]);
    const reordered = { country: 'FR', region: null, postal_code: '75002', city: 'Paris', line2: null, line1: '1 rue de la Paix' };
    expect(changedFields(current, { address: reordered })).toEqual([]);
    expect(changedFields(EMPTY_PROFILE, { legal_name: null, address: null })).toEqual([]);
  });
});

describe(applyPatch.name, () => {
  it('takes the fields sent, null included, and keeps the others', () => {
    const current = stored({ legal_name: 'Acme', iban: IBAN, bic: 'DEUTDEFF' });
    expect(applyPatch(current, { bic: null, email: 'billing@acme.example' })).toEqual({
      legal_name: 'Acme',
      address: null,
      vat_id: null,
      email: 'billing@acme.example',
      iban: IBAN,
      bic: null,
      payment_terms: null,
    });
  });
});

describe(auditDataOf.name, () => {
  it('records the names of the fields changed and the version, never their values', () => {
    const previous = stored({ legal_name: 'Acme' });
    const next = applyPatch(previous, { legal_name: 'Acme SARL', email: 'billing@acme.example' });
    expect(auditDataOf(previous, next, ['legal_name', 'email'], 2)).toEqual({ changed_fields: ['legal_name', 'email'], version: 2 });
  });

  it('records only the last 4 characters of an IBAN changed, before and after, never the whole number', () => {
    const previous = stored({ iban: IBAN });
    const next = applyPatch(previous, { iban: OTHER_IBAN });
    const data = auditDataOf(previous, next, ['iban'], 2);
    expect(data).toEqual({ changed_fields: ['iban'], version: 2, iban_last4: '2606', previous_iban_last4: '3000' });
    expect(JSON.stringify(data)).not.toContain(IBAN.slice(4, 12));
    expect(JSON.stringify(data)).not.toContain(OTHER_IBAN.slice(4, 12));
    // Set for the first time, and cleared.
    expect(auditDataOf(EMPTY_PROFILE, applyPatch(EMPTY_PROFILE, { iban: IBAN }), ['iban'], 1)).toMatchObject({ iban_last4: '3000', previous_iban_last4: null });
    expect(auditDataOf(previous, applyPatch(previous, { iban: null }), ['iban'], 2)).toMatchObject({ iban_last4: null, previous_iban_last4: '3000' });
    expect(ibanLast4(null)).toBeNull();
  });
});

describe(profileChangedEvent.name, () => {
  it('carries the whole profile and its version, keyed by the organization, valid against its schema', () => {
    const profile = profileView(ORG, stored({ legal_name: 'Acme SARL', address: ADDRESS, iban: IBAN, bic: 'DEUTDEFF', payment_terms: 'Net 30.\nThanks.' }, 3));
    const event = profileChangedEvent(profile, ['iban', 'payment_terms']);
    expect(event).toMatchObject({
      specversion: '1.0',
      type: ORGANIZATION_PROFILE_CHANGED_V1,
      source: '/invoicing/auth-service',
      subject: profile.organization_id,
      time: profile.updated_at,
      datacontenttype: 'application/json',
      data: { organization_id: profile.organization_id, version: 3, changed_fields: ['iban', 'payment_terms'], profile },
    });
    expect(validateDomainTopicEvent(event)).toEqual({ ok: true, value: event });
    // Not an object's event: consumers of objects' events refuse it by name, not by shape.
    expect(validateDomainEvent(event)).toEqual({ ok: false, errors: [`${ORGANIZATION_PROFILE_CHANGED_V1} is not an object's event`] });
  });

  it('has an id of the organization and version: the same change, the same event; another change, another', () => {
    const profile = profileView(ORG, stored({ legal_name: 'Acme' }, 1));
    const id = profileChangedEvent(profile, ['legal_name']).id;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(profileChangedEvent({ ...profile }, ['legal_name']).id).toBe(id);
    expect(profileChangedEvent({ ...profile, version: 2 }, ['legal_name']).id).not.toBe(id);
    expect(profileChangedEvent(profileView(newOrganization(), stored({ legal_name: 'Acme' }, 1)), ['legal_name']).id).not.toBe(id);
  });

  it('is refused by its schema when it would carry something the profile has not (a field of its own, no field changed, an IBAN not normalized)', () => {
    const profile = profileView(ORG, stored({ iban: IBAN }, 1));
    const event = profileChangedEvent(profile, ['iban']);
    expect(validateDomainTopicEvent({ ...event, data: { ...event.data, profile: { ...profile, logo: 'x' } } }).ok).toBe(false);
    expect(validateDomainTopicEvent({ ...event, data: { ...event.data, changed_fields: [] } }).ok).toBe(false);
    expect(validateDomainTopicEvent({ ...event, data: { ...event.data, profile: { ...profile, iban: 'de89 3704' } } }).ok).toBe(false);
    expect(() => profileChangedEvent(profileView(ORG, EMPTY_PROFILE), ['iban'])).toThrow(/never changed/);
  });
});
