import type { IncomingMessage } from 'node:http';
import { requestIdFrom } from './request-id';

const req = (value?: string | string[]) => ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as IncomingMessage;

describe(requestIdFrom.name, () => {
  it('echoes a sane caller id', () => {
    expect(requestIdFrom(req('abc-123.X:y_z'))).toBe('abc-123.X:y_z');
  });

  it('mints a UUID when absent or hostile', () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    expect(requestIdFrom(req())).toMatch(uuid);
    expect(requestIdFrom(req('a\r\nSet-Cookie: x'))).toMatch(uuid);
    expect(requestIdFrom(req('x'.repeat(129)))).toMatch(uuid);
  });
});
