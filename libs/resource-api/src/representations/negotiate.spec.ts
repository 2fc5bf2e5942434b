import { negotiate } from './negotiate';

const OFFERED = ['application/json', 'application/pdf', 'application/xml'];

describe(negotiate.name, () => {
  it.each([
    [undefined, 'application/json'],
    ['', 'application/json'],
    ['*/*', 'application/json'],
    ['application/json', 'application/json'],
    ['application/pdf', 'application/pdf'],
    ['Application/PDF', 'application/pdf'],
    ['application/xml; charset=utf-8', 'application/xml'],
    ['application/*', 'application/json'],
    // Quality values: the highest wins; the server's order breaks ties.
    ['application/json;q=0.5, application/pdf', 'application/pdf'],
    ['application/xml;q=0.9, application/pdf;q=0.9', 'application/pdf'],
    // The most specific range gives a type its quality: PDF excluded, whatever */* says.
    ['application/pdf, */*;q=0.1', 'application/pdf'],
    ['application/json;q=0, */*', 'application/pdf'],
    ['application/json;q=0, application/pdf;q=0, */*', 'application/xml'],
    // A browser's header asks for XML (q=0.9) before anything else (*/* at 0.8): the e-invoice.
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'application/xml'],
    // Unparseable, or no range at all: as if absent.
    ['application', 'application/json'],
    ['*/pdf', 'application/json'],
    [',', 'application/json'],
    [' , ,', 'application/json'],
    ['application/pdf;q=0.0001, application/json;q=0', 'application/json'],
    ['application/pdf;q=abc', 'application/json'],
    ['application/pdf;q=1.5', 'application/json'],
    ['application/pdf;q=1.000, application/json;q=0.5', 'application/pdf'],
  ])('Accept %p → %p', (accept, chosen) => {
    expect(negotiate(accept, OFFERED)).toBe(chosen);
  });

  it.each([['text/html'], ['application/json;q=0'], ['image/*'], ['application/pdf;q=0, application/json;q=0, application/xml;q=0']])('Accept %p allows none: null (406)', (accept) => {
    expect(negotiate(accept, OFFERED)).toBeNull();
  });

  it('reads a bounded number of ranges', () => {
    const header = `${Array.from({ length: 1000 }, (_, i) => `text/x-${i}`).join(', ')}, application/pdf`;
    expect(negotiate(header, OFFERED)).toBeNull();
  });
});
