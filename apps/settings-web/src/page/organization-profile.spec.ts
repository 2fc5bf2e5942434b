import { formFieldErrors, formFieldOf, formValuesOf, groupIban, OrganizationProfile, profilePatch, ProfileFormValues } from './organization-profile';

const EMPTY: OrganizationProfile = {
  object: 'organization_profile',
  organization_id: 'org_1',
  legal_name: null,
  address: null,
  vat_id: null,
  email: null,
  iban: null,
  bic: null,
  payment_terms: null,
  version: 0,
  updated_at: null,
};

const SET: OrganizationProfile = {
  ...EMPTY,
  legal_name: 'Muster GmbH',
  address: { line1: 'Hauptstraße 1', line2: null, city: 'Berlin', postal_code: '10115', region: null, country: 'DE' },
  vat_id: 'DE123456789',
  email: 'billing@muster.example',
  iban: 'DE89370400440532013000',
  bic: 'COBADEFFXXX',
  payment_terms: 'Payable within 30 days.\nNo discount.',
  version: 3,
  updated_at: '2026-01-31T09:05:00.000Z',
};

const edit = (profile: OrganizationProfile, changes: Partial<ProfileFormValues>): ProfileFormValues => ({ ...formValuesOf(profile), ...changes });

describe('formValuesOf', () => {
  it('gives every control an empty value for a profile never set', () => {
    expect(Object.values(formValuesOf(EMPTY))).toEqual(Array(11).fill(''));
  });

  it('spreads the address over its controls, empty where a line is null', () => {
    expect(formValuesOf(SET)).toMatchObject({
      legal_name: 'Muster GmbH',
      address_line1: 'Hauptstraße 1',
      address_line2: '',
      address_postal_code: '10115',
      address_city: 'Berlin',
      address_country: 'DE',
      iban: 'DE89370400440532013000',
    });
  });
});

describe('profilePatch', () => {
  it('sends nothing when nothing changed, blanks and line endings aside', () => {
    expect(profilePatch(SET, formValuesOf(SET))).toEqual({});
    expect(profilePatch(EMPTY, formValuesOf(EMPTY))).toEqual({});
    expect(profilePatch(SET, edit(SET, { legal_name: '  Muster GmbH ', payment_terms: 'Payable within 30 days.\r\nNo discount.\n', address_country: 'de' }))).toEqual({});
    expect(profilePatch(EMPTY, edit(EMPTY, { legal_name: '   ' }))).toEqual({});
  });

  it('sends only the fields that changed, trimmed, as typed (the server normalizes them)', () => {
    expect(profilePatch(SET, edit(SET, { iban: ' de89 3704 0044 0532 0130 01 ', email: 'accounts@muster.example' }))).toEqual({
      email: 'accounts@muster.example',
      iban: 'de89 3704 0044 0532 0130 01',
    });
  });

  it('sends null for a field emptied', () => {
    expect(profilePatch(SET, edit(SET, { vat_id: '', bic: '  ' }))).toEqual({ vat_id: null, bic: null });
  });

  it('sends the whole address when one line changed, without its empty lines, the country upper-cased', () => {
    expect(profilePatch(SET, edit(SET, { address_line2: 'Hinterhaus', address_country: 'de' }))).toEqual({
      address: { line1: 'Hauptstraße 1', line2: 'Hinterhaus', postal_code: '10115', city: 'Berlin', country: 'DE' },
    });
    expect(profilePatch(EMPTY, edit(EMPTY, { address_line1: 'Rue 1', address_city: 'Paris', address_country: 'fr' }))).toEqual({
      address: { line1: 'Rue 1', city: 'Paris', country: 'FR' },
    });
  });

  it('keeps the region the form does not show', () => {
    const withRegion: OrganizationProfile = { ...SET, address: { line1: 'Hauptstraße 1', line2: null, city: 'Berlin', postal_code: '10115', region: 'Berlin-Mitte', country: 'DE' } };
    expect(profilePatch(withRegion, edit(withRegion, { address_city: 'Berlin ' }))).toEqual({});
    expect(profilePatch(withRegion, edit(withRegion, { address_postal_code: '10117' })).address).toEqual({
      line1: 'Hauptstraße 1',
      postal_code: '10117',
      city: 'Berlin',
      region: 'Berlin-Mitte',
      country: 'DE',
    });
  });

  it('clears the address when every line is emptied, and leaves required lines out for the server to name', () => {
    const cleared = edit(SET, { address_line1: '', address_postal_code: '', address_city: '', address_country: '' });
    expect(profilePatch(SET, cleared)).toEqual({ address: null });
    expect(profilePatch(SET, edit(SET, { address_city: '' }))).toEqual({ address: { line1: 'Hauptstraße 1', postal_code: '10115', country: 'DE' } });
  });
});

describe('formFieldOf', () => {
  it('names the address line controls after the server\'s address keys', () => {
    expect(formFieldOf('address.line1')).toBe('address_line1');
    expect(formFieldOf('address.postal_code')).toBe('address_postal_code');
    expect(formFieldOf('/address/country')).toBe('address_country');
  });

  it('gives the address as a whole what has no control of its own', () => {
    expect(formFieldOf('address')).toBe('address');
    expect(formFieldOf('address.region')).toBe('address');
  });

  it('keeps every other field as it is', () => {
    expect(formFieldOf('iban')).toBe('iban');
    expect(formFieldOf('addressee')).toBe('addressee');
    expect(formFieldErrors([{ field: 'address.city', code: 'required', message: 'is required' }, { field: 'iban', code: 'invalid_checksum', message: 'has check digits that do not match' }])).toEqual([
      { field: 'address_city', code: 'required', message: 'is required' },
      { field: 'iban', code: 'invalid_checksum', message: 'has check digits that do not match' },
    ]);
  });
});

describe('groupIban', () => {
  it('groups an IBAN by four for reading', () => {
    expect(groupIban('DE89370400440532013000')).toBe('DE89 3704 0044 0532 0130 00');
    expect(groupIban('NO9386011117947')).toBe('NO93 8601 1117 947');
    expect(groupIban('BE68539007547034')).toBe('BE68 5390 0754 7034');
  });
});
