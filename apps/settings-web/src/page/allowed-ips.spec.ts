import { addressesText, nameAddressErrors, parseAddressLines, withNamedAddresses } from './allowed-ips';
import { toProblem } from './problem-details';
import { ApiError } from './settings-api.client';

describe('allowed IP addresses', () => {
  it('sends trimmed, non-empty lines and remembers the line of each', () => {
    expect(parseAddressLines('  203.0.113.0/24 \r\n\n2001:db8::1\r\n   \n10.0.0.1')).toEqual([
      { value: '203.0.113.0/24', line: 1 },
      { value: '2001:db8::1', line: 3 },
      { value: '10.0.0.1', line: 5 },
    ]);
    expect(parseAddressLines('')).toEqual([]);
    expect(parseAddressLines(' \n \n')).toEqual([]);
  });

  it('writes a list back one entry a line', () => {
    expect(addressesText(['203.0.113.0/24', '2001:db8::/32'])).toBe('203.0.113.0/24\n2001:db8::/32');
    expect(addressesText([])).toBe('');
  });

  it('names the entry and its line in an allowed_ips[N] error, whatever the server wrote', () => {
    const entries = parseAddressLines('10.0.0.1\n\n10.0.0.300\nnope');
    const named = nameAddressErrors(
      [
        { field: 'allowed_ips[1]', code: 'invalid_address', message: 'is not an IP address or CIDR block' },
        { field: '/allowed_ips/2', code: 'invalid_address', message: 'Not an IP address or CIDR block: nope' },
        { field: 'allowed_ips', code: 'too_many', message: 'at most 100 entries' },
        { field: 'allowed_ips[9]', code: 'invalid_address', message: 'bad' },
        { field: 'name', code: 'required', message: 'is required' },
      ],
      entries,
    );
    expect(named.map((e) => e.message)).toEqual([
      '“10.0.0.300” (line 3) is not an IP address or CIDR block.',
      '“nope” (line 4): Not an IP address or CIDR block: nope.',
      'at most 100 entries',
      'bad',
      'is required',
    ]);
    expect(named.map((e) => e.field)).toEqual(['allowed_ips[1]', '/allowed_ips/2', 'allowed_ips', 'allowed_ips[9]', 'name']);
  });

  it('drops the entry the server echoes at the start of its message instead of naming it twice', () => {
    const entries = parseAddressLines('10.0.0.1\n10.0.0.1\nnot-an-address');
    const named = nameAddressErrors(
      [
        { field: 'allowed_ips[1]', code: 'duplicate', message: '"10.0.0.1" is listed twice' },
        { field: 'allowed_ips[2]', code: 'invalid_address', message: '"not-an-address" is not an IPv4 or IPv6 address or CIDR block' },
        { field: 'allowed_ips[0]', code: 'invalid_address', message: '"a \\"quoted\\" one" has a zone id' },
      ],
      entries,
    );
    expect(named.map((e) => e.message)).toEqual([
      '“10.0.0.1” (line 2) is listed twice.',
      '“not-an-address” (line 3) is not an IPv4 or IPv6 address or CIDR block.',
      '“10.0.0.1” (line 1) has a zone id.',
    ]);
  });

  it('rewrites an API failure and leaves anything else alone', () => {
    const entries = parseAddressLines('x');
    const failure = new ApiError(toProblem(422, { errors: [{ field: 'allowed_ips[0]', code: 'invalid_address', message: 'is not valid' }] }), null);
    const named = withNamedAddresses(failure, entries) as ApiError;
    expect(named).toBeInstanceOf(ApiError);
    expect(named.status).toBe(422);
    expect(named.problem.errors[0].message).toBe('“x” (line 1) is not valid.');
    const other = new Error('boom');
    expect(withNamedAddresses(other, entries)).toBe(other);
  });
});
