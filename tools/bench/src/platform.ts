import { GATEWAY_PORT, Resource, RESOURCES, SERVICES, ServiceName, serviceOfResource } from '@invoicing/contracts';
import { DEV_JWT_KEYS } from '@invoicing/auth-guard';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LoadOptions } from './load';

/** Ports of the stack started by tools/stack/start.sh (which honours STACK_PORT_OFFSET too). */
const OFFSET = Number(process.env.STACK_PORT_OFFSET ?? 0);
export const ROOT = join(__dirname, '..', '..', '..');

export function serviceUrl(name: ServiceName): string {
  return `http://127.0.0.1:${SERVICES[name].port + OFFSET}`;
}
export const GATEWAY_URL = `http://127.0.0.1:${GATEWAY_PORT + OFFSET}`;

/** Resource → the service that owns it. */
export const RESOURCE_SERVICES = Object.fromEntries(RESOURCES.map((r) => [r, serviceOfResource(r)])) as Record<Resource, ServiceName>;
export { RESOURCES };

export function mainOf(name: ServiceName | 'gateway'): string {
  return join(ROOT, 'dist', 'apps', name, 'apps', name, 'src', 'main.js');
}

/** Pid of a stack process (tools/stack keeps them in .infra/stack/<name>.pid). */
export async function stackPid(name: string): Promise<number | null> {
  const dir = process.env.INVOICING_STATE_DIR ?? join(ROOT, '.infra');
  try {
    return Number((await readFile(join(dir, 'stack', `${name}.pid`), 'utf8')).trim()) || null;
  } catch {
    return null;
  }
}

export interface Json {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

export async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Json> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: r.headers };
}

export interface ApiKey {
  id: string;
  clientId: string;
  clientSecret: string;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
}

/**
 * A settings-area account (signup, session cookie, CSRF token) that creates and revokes keys the
 * way the page does: the benchmark uses no back door into the database.
 */
export class SettingsAccount {
  private cookies = new Map<string, string>();
  private csrfToken = '';

  private constructor(private readonly base: string) {}

  static async signUp(base = serviceUrl('auth-service')): Promise<SettingsAccount> {
    const account = new SettingsAccount(base);
    const email = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@bench.example`;
    await account.fetchCsrfToken();
    const signup = await account.send('POST', '/api/v1/account/signup', { organization_name: 'Bench', email, password: 'quiet lantern over marble' });
    if (signup.status >= 300) throw new Error(`signup failed: ${signup.status} ${JSON.stringify(signup.body)}`);
    // The CSRF token is bound to the session: a new one after each sign-in.
    await account.fetchCsrfToken();
    const login = await account.send('POST', '/api/v1/account/login', { email, password: 'quiet lantern over marble' });
    if (login.status >= 300) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
    await account.fetchCsrfToken();
    return account;
  }

  async createKey(scopes: string[]): Promise<ApiKey> {
    const r = await this.send('POST', '/api/v1/settings/api-keys', { name: 'bench', scopes });
    if (r.status !== 201) throw new Error(`key creation failed: ${r.status} ${JSON.stringify(r.body)}`);
    return { id: r.body.id as string, clientId: r.body.client_id as string, clientSecret: r.body.client_secret as string };
  }

  async revokeKey(id: string): Promise<void> {
    const r = await this.send('POST', `/api/v1/settings/api-keys/${id}/revoke`, {});
    if (r.status !== 200) throw new Error(`revoke failed: ${r.status} ${JSON.stringify(r.body)}`);
  }

  /** Settings → Organization: the profile the organization's invoices print as their seller. */
  async updateOrganization(fields: Record<string, unknown>): Promise<void> {
    const r = await this.send('PATCH', '/api/v1/settings/organization', fields);
    if (r.status !== 200) throw new Error(`organization profile update failed: ${r.status} ${JSON.stringify(r.body)}`);
  }

  private async fetchCsrfToken(): Promise<void> {
    this.csrfToken = String((await this.send('GET', '/api/v1/account/csrf')).body.csrf_token);
  }

  private async send(method: string, path: string, body?: unknown): Promise<Json> {
    const headers: Record<string, string> = { origin: this.base };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (this.csrfToken) headers['x-csrf-token'] = this.csrfToken;
    const r = await fetch(this.base + path, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    for (const line of r.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
    }
    const text = await r.text();
    return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: r.headers };
  }
}

/** Throws, saying how to start it, unless the stack's `service` answers ready. */
export async function requireStack(service: ServiceName = 'auth-service'): Promise<void> {
  const ready = await fetch(`${serviceUrl(service)}/health/ready`).catch(() => null);
  if (ready?.status !== 200) throw new Error(`the stack (its ${service}) is not running: start it with \`bash tools/stack/start.sh\``);
}

/** The number after `--name` on the command line, or `fallback`. */
export function numberArg(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}

export function exchangeBody(key: ApiKey): string {
  return JSON.stringify({ grant_type: 'client_credentials', client_id: key.clientId, client_secret: key.clientSecret });
}

export async function exchange(key: ApiKey, base = serviceUrl('auth-service')): Promise<TokenPair> {
  const r = await fetch(`${base}/api/v1/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: exchangeBody(key) });
  if (r.status !== 200) throw new Error(`token exchange failed: ${r.status} ${await r.text()}`);
  return (await r.json()) as TokenPair;
}

/**
 * The load of refresh-token rotation: 16 chains (one per connection), each presenting the refresh
 * token its own last answer carried, from 40 fresh sessions of `key`. A chain never races itself,
 * so no answer is a reuse (which would revoke every chain of the key).
 */
export async function refreshChains(key: ApiKey, base: string, timing: { seconds: number; warmupSeconds?: number }): Promise<LoadOptions> {
  const pool = await Promise.all(Array.from({ length: 40 }, () => exchange(key, base)));
  const refreshes = pool.map((p) => p.refresh_token);
  return {
    url: `${base}/api/v1/auth/refresh`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    ...timing,
    chain: () => {
      let token = refreshes.pop();
      if (!token) throw new Error('out of refresh tokens for the chains');
      return {
        body: () => JSON.stringify({ refresh_token: token }),
        onResponse: (status, body) => {
          // A broken chain (counted as unexpected) must not present its token again: that would be
          // a reuse and revoke every chain of the key. It takes a fresh one, or sends nothing valid.
          token = status === 200 ? (JSON.parse(body) as { refresh_token: string }).refresh_token : (refreshes.pop() ?? 'rt_live_broken');
        },
      };
    },
  };
}

export async function refresh(refreshToken: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await call(`${serviceUrl('auth-service')}/api/v1/auth/refresh`, { method: 'POST', body: { refresh_token: refreshToken } });
  return { status: r.status, body: r.body };
}

/** What the hand-written floors need to verify our access tokens (the development ring unless JWT_KEYS is set). */
export const jwtEnv = {
  JWT_SECRET_B64URL: (process.env.JWT_KEYS ?? DEV_JWT_KEYS).split(',')[0].split('=').slice(1).join('='),
  JWT_ISSUER: process.env.JWT_ISSUER ?? 'http://localhost:8080',
  JWT_AUDIENCE: process.env.JWT_AUDIENCE ?? 'invoicing-api',
};

const TODAY = new Date().toISOString().slice(0, 10);

/**
 * Creates `count` objects of every resource in the key's organization (clients and products first,
 * then invoices on them, payments on the invoices, expenses) and returns one id of each.
 */
export async function seedObjects(token: string, count: number): Promise<Record<Resource, string>> {
  const auth = { authorization: `Bearer ${token}` };
  const post = async (resource: Resource, body: unknown): Promise<string> => {
    const r = await call(`${serviceUrl(RESOURCE_SERVICES[resource])}/api/v1/${resource}`, { method: 'POST', headers: auth, body });
    if (r.status !== 201) throw new Error(`creating ${resource} failed: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.id as string;
  };
  const ids = {} as Record<Resource, string>;
  for (let i = 0; i < count; i++) {
    ids.clients = await post('clients', { name: `Client ${i}`, email: `c${i}@bench.example`, currency: 'EUR' });
    ids.products = await post('products', { name: `Product ${i}`, unit_price: 1250 + i, currency: 'EUR', tax_rate_bps: 2000 });
    ids.invoices = await post('invoices', {
      client_id: ids.clients,
      currency: 'EUR',
      issue_date: TODAY,
      line_items: [{ description: 'Work', quantity: '2.5', unit_price: 10000, tax_rate_bps: 2000 }],
    });
    ids.payments = await post('payments', { invoice_id: ids.invoices, amount: 5000 + i, currency: 'EUR', method: 'bank_transfer' });
    ids.expenses = await post('expenses', { description: `Expense ${i}`, amount: 990 + i, currency: 'EUR', incurred_on: TODAY });
  }
  return ids;
}
