import { eventExamples } from '../asyncapi/event-examples';
import * as contracts from '../index';
import {
  DOMAIN_EVENT_TYPES,
  DOMAIN_TOPIC_EVENT_SCHEMAS,
  DOMAIN_TOPIC_TYPES,
  INVOICE_BALANCE_CHANGED_TYPE,
  isObjectEvent,
  ORGANIZATION_PROFILE_CHANGED_V1,
  OrganizationProfileChangedV1,
  validateDomainEvent,
  validateDomainTopicEvent,
} from './domain-events';

const examples = eventExamples();
const profileChanged = () => structuredClone(examples[ORGANIZATION_PROFILE_CHANGED_V1]) as OrganizationProfileChangedV1;

describe('the domain topic\'s types', () => {
  it('are the objects\' events and an organization\'s profile changes, each with a schema', () => {
    expect(Object.keys(DOMAIN_TOPIC_EVENT_SCHEMAS).sort()).toEqual([...Object.values(DOMAIN_EVENT_TYPES), INVOICE_BALANCE_CHANGED_TYPE, ORGANIZATION_PROFILE_CHANGED_V1].sort());
    // The objects' map is what read models are fed from: the profile change is not in it.
    expect(Object.keys(DOMAIN_TOPIC_TYPES)).not.toContain(ORGANIZATION_PROFILE_CHANGED_V1);
    expect(contracts.validateDomainTopicEvent).toBe(validateDomainTopicEvent);
  });

  it('validates every type\'s example with validateDomainTopicEvent; isObjectEvent tells the objects\' from the profile\'s', () => {
    for (const type of Object.keys(DOMAIN_TOPIC_EVENT_SCHEMAS)) {
      const result = validateDomainTopicEvent(examples[type]);
      expect({ type, ok: result.ok }).toEqual({ type, ok: true });
      if (result.ok) expect({ type, object: isObjectEvent(result.value) }).toEqual({ type, object: type !== ORGANIZATION_PROFILE_CHANGED_V1 });
    }
  });

  it('keeps validateDomainEvent for objects\' events: a profile change is refused by name, an unknown type as unknown', () => {
    expect(validateDomainEvent(examples[DOMAIN_EVENT_TYPES.client]).ok).toBe(true);
    expect(validateDomainEvent(profileChanged())).toEqual({ ok: false, errors: [`${ORGANIZATION_PROFILE_CHANGED_V1} is not an object's event`] });
    expect(validateDomainTopicEvent({ ...profileChanged(), type: 'invoicing.settings.organization_logo_changed.v1' })).toEqual({
      ok: false,
      errors: ['unknown event type "invoicing.settings.organization_logo_changed.v1"'],
    });
    for (const notAnEvent of [null, undefined, 'text', 42, [], { type: 'constructor' }, { type: '__proto__' }]) expect(validateDomainTopicEvent(notAnEvent).ok).toBe(false);
  });

  it('refuses a profile change keyed by something other than the organization, without a version, or with fields the profile has not', () => {
    const ok = profileChanged();
    expect(validateDomainTopicEvent(ok).ok).toBe(true);
    const broken: unknown[] = [
      { ...ok, subject: 'cli_0192d5a0c3b87a6e9f1d2c3b4a596870' },
      { ...ok, data: { ...ok.data, version: 0 } },
      { ...ok, data: { ...ok.data, changed_fields: ['logo'] } },
      { ...ok, data: { ...ok.data, previous: {} } },
      { ...ok, data: { ...ok.data, profile: { ...ok.data.profile, iban: 'fr14 2004' } } },
      { ...ok, data: { ...ok.data, profile: { ...ok.data.profile, bic: 'PSST' } } },
      { ...ok, data: { ...ok.data, profile: { ...ok.data.profile, secret: 'x' } } },
    ];
    for (const event of broken) expect(validateDomainTopicEvent(event).ok).toBe(false);
  });
});
