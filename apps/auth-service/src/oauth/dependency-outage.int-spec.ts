import { newRefreshToken } from '../keys/credential-format';
import { AuthTestApp, postJson, startAuthTestApp } from '../testing/auth-test-app';

/**
 * With Redis unreachable the token endpoints answer 503 temporarily_unavailable with Retry-After,
 * never a 500 and never a token that was not recorded. (A closed port stands for the outage; the
 * real Redis of the other suites is untouched.)
 */
describe('auth service with Redis unreachable', () => {
  let app: AuthTestApp;
  let key: Awaited<ReturnType<AuthTestApp['createKey']>>;

  beforeAll(async () => {
    app = await startAuthTestApp({ REDIS_URL: 'redis://127.0.0.1:6399/0' });
    key = await app.createKey();
  });

  afterAll(async () => {
    await app.close();
  });

  it('answers the token exchange with 503 temporarily_unavailable and issues nothing', async () => {
    const r = await postJson(`${app.baseUrl}/api/v1/auth/token`, {
      client_id: key.clientId,
      client_secret: key.clientSecret,
      grant_type: 'client_credentials',
    });
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    expect(r.headers.get('retry-after')).toBe('1');
    expect(JSON.stringify(r.body)).not.toMatch(/redis|ECONNREFUSED|6399/i);
  });

  it('answers a refresh with 503 as well, and reports not ready', async () => {
    // Well-formed (valid checksum), so it gets past the format check and needs Redis.
    const r = await postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: newRefreshToken() });
    expect(r.status).toBe(503);
    expect(r.body.error).toBe('temporarily_unavailable');
    const ready = await fetch(`${app.baseUrl}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ checks: { postgres: 'up', redis: 'down' } });
  });
});
