import { Logger } from '@nestjs/common';
import Fastify from 'fastify';
import { pino } from 'pino';
import { fastifyBaseOptions } from './fastify-base';
import { installRequestDeadline } from './request-deadline';

function appWithDeadline(timeoutMs: number) {
  const app = Fastify(fastifyBaseOptions(pino({ level: 'silent' }), { trustProxy: false }));
  const logger = new Logger('spec');
  const logged: unknown[] = [];
  jest.spyOn(logger, 'error').mockImplementation((entry: unknown) => void logged.push(entry));
  installRequestDeadline(app, timeoutMs, logger, (request) => (request.url.startsWith('/oauth') ? 'oauth' : 'problem'));
  return { app, logged };
}

describe('installRequestDeadline', () => {
  it('answers a request whose handler never settles with a 503 problem at the deadline, naming the route in the log', async () => {
    const { app, logged } = appWithDeadline(150);
    app.get('/api/v1/invoices/:id', () => new Promise(() => undefined));
    const started = Date.now();
    const response = await app.inject({ method: 'GET', url: '/api/v1/invoices/inv_1', headers: { 'x-request-id': 'req-slow' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({ status: 503, detail: expect.stringContaining('0.15 s'), request_id: 'req-slow' });
    expect(logged).toEqual([expect.objectContaining({ route: '/api/v1/invoices/:id', timeout_ms: 150 })]);
    await app.close();
  });

  it("answers in the endpoint's form: RFC 6749 temporarily_unavailable on an OAuth path", async () => {
    const { app } = appWithDeadline(100);
    app.post('/oauth/token', () => new Promise(() => undefined));
    const response = await app.inject({ method: 'POST', url: '/oauth/token' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    await app.close();
  });

  it('leaves an answer given in time alone, and stops its timer', async () => {
    const { app, logged } = appWithDeadline(100);
    app.get('/fast', async () => ({ ok: true }));
    const response = await app.inject({ method: 'GET', url: '/fast' });
    expect(response.statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(logged).toEqual([]);
    await app.close();
  });

  it("drops a late handler's answer: the caller keeps the 503", async () => {
    const { app } = appWithDeadline(100);
    app.get('/late', async () => {
      await new Promise((resolve) => setTimeout(resolve, 250));
      return { late: true };
    });
    const response = await app.inject({ method: 'GET', url: '/late' });
    expect(response.statusCode).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await app.close();
  });
});
