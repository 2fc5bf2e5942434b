import { throttleAddress } from './throttle-address';

describe(throttleAddress.name, () => {
  it('keeps IPv4 addresses and unwraps IPv4-mapped ones', () => {
    expect(throttleAddress('203.0.113.9')).toBe('203.0.113.9');
    expect(throttleAddress('::ffff:203.0.113.9')).toBe('203.0.113.9');
  });

  it('counts an IPv6 address by its /64, however it is written', () => {
    const block = '2001:db8:0:1::/64';
    expect(throttleAddress('2001:db8:0:1::1')).toBe(block);
    expect(throttleAddress('2001:db8:0:1:ffff:ffff:ffff:ffff')).toBe(block);
    expect(throttleAddress('2001:0DB8:0000:0001:0:0:0:2')).toBe(block);
    expect(throttleAddress('2001:db8:0:2::1')).not.toBe(block);
    expect(throttleAddress('::1')).toBe('0:0:0:0::/64');
  });
});
