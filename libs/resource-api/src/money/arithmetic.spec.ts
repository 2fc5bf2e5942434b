import { divRoundHalfUp, formatQuantity, lineAmount, lineTax, parseQuantity } from './arithmetic';

describe('money arithmetic', () => {
  it('rounds half up', () => {
    expect(divRoundHalfUp(5n, 2n)).toBe(3n);
    expect(divRoundHalfUp(4n, 2n)).toBe(2n);
    expect(divRoundHalfUp(149n, 100n)).toBe(1n);
    expect(divRoundHalfUp(150n, 100n)).toBe(2n);
  });

  it('parses quantities with at most three decimals', () => {
    expect(parseQuantity(1.5)).toBe(1500n);
    expect(parseQuantity('0.001')).toBe(1n);
    expect(parseQuantity('2')).toBe(2000n);
    expect(parseQuantity(1.0005)).toBeNull();
    expect(parseQuantity('1e3')).toBeNull();
    expect(parseQuantity(-1)).toBeNull();
    expect(parseQuantity('1.')).toBeNull();
  });

  it('computes line amount and tax exactly (no float drift)', () => {
    // 0.1 x 3 in floating point is 0.30000000000000004; here it is exact.
    expect(lineAmount(parseQuantity('0.3')!, 10n)).toBe(3n);
    expect(lineAmount(1500n, 10001n)).toBe(15002n); // 15001.5 rounds up
    expect(lineTax(15002n, 2000n)).toBe(3000n); // 3000.4 rounds down
    expect(lineTax(25n, 2000n)).toBe(5n);
    expect(lineTax(1n, 5000n)).toBe(1n); // 0.5 rounds up
  });

  it('formats quantities back without trailing zeros', () => {
    expect(formatQuantity(1500n)).toBe('1.5');
    expect(formatQuantity(2000n)).toBe('2');
    expect(formatQuantity(1n)).toBe('0.001');
  });
});
