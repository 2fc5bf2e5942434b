import { OVERLAP_SECONDS, rollInput } from './roll-options';

describe('roll options', () => {
  it('maps the overlap choices to previous_secret_expires_in', () => {
    expect(OVERLAP_SECONDS).toEqual({ immediately: 0, oneHour: 3600, oneDay: 86400, sevenDays: 604800 });
    expect(rollInput('0', false)).toEqual({ previous_secret_expires_in: 0 });
    expect(rollInput('3600', false)).toEqual({ previous_secret_expires_in: 3600 });
    expect(rollInput('0', true)).toEqual({ previous_secret_expires_in: 0, end_sessions: true });
    // Ending the sessions ends the old secret at once: an overlap would let a leaked secret open new ones.
    expect(rollInput('604800', true)).toEqual({ previous_secret_expires_in: 0, end_sessions: true });
  });

  it('refuses anything that is not one of the choices', () => {
    expect(rollInput(null, false)).toBeNull();
    expect(rollInput('60', false)).toBeNull();
    expect(rollInput('-1', false)).toBeNull();
    expect(rollInput('3600.5', false)).toBeNull();
    expect(rollInput('', false)).toBeNull();
  });
});
