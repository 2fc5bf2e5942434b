import Fastify from 'fastify';
import { pino } from 'pino';
import { fastifyBaseOptions } from './fastify-base';
import { PROBLEM_TYPE_BASE } from './problem';

describe('fastifyBaseOptions: what the router refuses is a problem that quotes nothing', () => {
  it('answers a URL that is not percent-encoded UTF-8 400 problem+json with the request id', async () => {
    const app = Fastify(fastifyBaseOptions(pino({ level: 'silent' }), { trustProxy: false }));
    app.get('/api/v1/invoices/:id', async () => ({ ok: true }));
    const response = await app.inject({ method: 'GET', url: '/api/v1/invoices/%ff', headers: { 'x-request-id': 'req-bad-url' } });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['x-request-id']).toBe('req-bad-url');
    expect(response.json()).toMatchObject({ status: 400, type: `${PROBLEM_TYPE_BASE}bad-request`, request_id: 'req-bad-url' });
    expect(response.body).not.toContain('%ff');
    await app.close();
  });
});
