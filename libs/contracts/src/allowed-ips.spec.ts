import { AddressAllowlist, MAX_ALLOWED_IPS, parseAllowedIps } from './allowed-ips';

describe('parseAllowedIps', () => {
  it('answers canonical entries: RFC 5952 IPv6, no /32 or /128, blocks as network/prefix', () => {
    expect(parseAllowedIps(['203.0.113.9', ' 198.51.100.0/24 ', '10.0.0.7/32', '2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8:0:0:1::/80', '::1/128', '0.0.0.0/0', '2000::/3'])).toEqual({
      ok: true,
      value: ['203.0.113.9', '198.51.100.0/24', '10.0.0.7', '2001:db8::1', '2001:db8:0:0:1::/80', '::1', '0.0.0.0/0', '2000::/3'],
    });
    // The first of two equally long runs of zeros is the one compressed; a single zero group is not.
    expect(parseAllowedIps(['2001:db8:0:0:1:0:0:1', '2001:db8:0:1:1:1:1:1'])).toEqual({ ok: true, value: ['2001:db8::1:0:0:1', '2001:db8:0:1:1:1:1:1'] });
    expect(parseAllowedIps(['64:ff9b::192.0.2.33'])).toEqual({ ok: true, value: ['64:ff9b::c000:221'] });
    expect(parseAllowedIps([])).toEqual({ ok: true, value: [] });
  });

  it('names each bad entry by its index and says why', () => {
    const result = parseAllowedIps(['10.0.0.1/8', 'example.com', '1.2.3.04', '10.0.0.0/33', '10.0.0.0/08', 'fe80::1%eth0', '::ffff:1.2.3.4', 7, '203.0.113.9', '203.0.113.9/32']);
    expect(result.ok).toBe(false);
    const errors = result.ok ? [] : result.errors;
    expect(errors.map((e) => [e.index, e.code])).toEqual([
      [0, 'invalid_address'],
      [1, 'invalid_address'],
      [2, 'invalid_address'],
      [3, 'invalid_address'],
      [4, 'invalid_address'],
      [5, 'invalid_address'],
      [6, 'invalid_address'],
      [7, 'invalid_address'],
      [9, 'duplicate'],
    ]);
    expect(errors[0].message).toBe('"10.0.0.1/8" has bits set after the /8 prefix (the network address is 10.0.0.0/8)');
    expect(errors[1].message).toContain('"example.com" is not an IPv4 or IPv6 address');
  });

  it('refuses IPv6 blocks that hold the IPv4-mapped range: they would allow every IPv4 client', () => {
    for (const entry of ['::/0', '::/64', '::/80', '::ff00:0:0/88', '::ffff:0:0/96']) {
      const result = parseAllowedIps([entry]);
      expect({ entry, ok: result.ok }).toEqual({ entry, ok: false });
    }
    // Blocks beside it are fine, and so is a /97 that is not mapped (::ffff:0:0/97 is the mapped form of 0.0.0.0/1).
    expect(parseAllowedIps(['::/96', '::1:0:0/96', 'fe80::/10']).ok).toBe(true);
  });

  it(`refuses more than ${MAX_ALLOWED_IPS} entries, and anything but an array`, () => {
    const many = Array.from({ length: MAX_ALLOWED_IPS + 1 }, (_, i) => `10.0.${i}.0/24`);
    expect(parseAllowedIps(many)).toEqual({ ok: false, errors: [{ index: null, code: 'too_many', message: 'at most 100 entries (got 101)' }] });
    expect(parseAllowedIps(many.slice(0, MAX_ALLOWED_IPS)).ok).toBe(true);
    expect(parseAllowedIps('10.0.0.0/8').ok).toBe(false);
  });
});

describe('AddressAllowlist', () => {
  const list = AddressAllowlist.of(['203.0.113.0/24', '198.51.100.7', '2001:db8::/32']);

  it('allows addresses inside its entries, IPv4-mapped clients included', () => {
    expect(list.allows('203.0.113.200')).toBe(true);
    expect(list.allows('::ffff:203.0.113.200')).toBe(true);
    expect(list.allows('198.51.100.7')).toBe(true);
    expect(list.allows('2001:db8:ffff::1')).toBe(true);
  });

  it('refuses everything else, including what is not an address', () => {
    expect(list.allows('203.0.114.1')).toBe(false);
    expect(list.allows('198.51.100.8')).toBe(false);
    expect(list.allows('2001:db9::1')).toBe(false);
    expect(list.allows('127.0.0.1')).toBe(false);
    expect(list.allows('')).toBe(false);
    expect(list.allows(undefined)).toBe(false);
    expect(list.allows('203.0.113.1, 10.0.0.1')).toBe(false);
  });

  it('gives the same answer the second time (remembered) and shares one instance per list', () => {
    expect(list.allows('203.0.114.1')).toBe(false);
    expect(list.allows('203.0.113.5')).toBe(true);
    expect(list.allows('203.0.113.5')).toBe(true);
    expect(AddressAllowlist.of(['203.0.113.0/24', '198.51.100.7', '2001:db8::/32'])).toBe(list);
  });
});
