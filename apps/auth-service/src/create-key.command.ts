import { NestFactory } from '@nestjs/core';
import { parsePublicId, toPublicId } from '@invoicing/contracts';
import { parseArgs } from 'node:util';
import { ApiKeysService, InvalidApiKeyInput } from './keys/api-keys.service';
import { CliModule } from './app.module';
import type { AuthConfig } from './config/config';

const USAGE = `usage: auth-service create-key --name NAME --scopes read:invoices,write:invoices
                       (--organization-name ORG | --organization-id org_...)
                       [--expires-at 2027-01-31T23:59:59Z] [--allowed-ips 203.0.113.0/24,2001:db8::/32]`;

const HELP = `${USAGE}

Creates an API key and prints it as one line of JSON: organization_id, id, name, client_id,
client_secret (shown only here), scopes, created_at, expires_at, allowed_ips.

  --name NAME              what the key is for (shown in Settings -> API)
  --scopes LIST            comma- or space-separated, e.g. read:invoices,write:invoices
  --organization-id ID     add the key to an existing organization (org_..., as a key's
                           organization_id prints it); its users see the key in Settings -> API
  --organization-name ORG  or make a new organization for it (a new one on every run, with no
                           user: sign up in Settings to manage keys there instead)
  --expires-at TIME        an RFC 3339 time after which the key stops working
  --allowed-ips LIST       addresses or CIDR blocks the key may be used from
  -h, --help               this text`;

/**
 * Creates an organization (or uses an existing one) and an API key, and prints
 * `{organization_id, id, name, client_id, client_secret, scopes, created_at, expires_at, allowed_ips}`
 * as JSON on stdout. The expiry and the allowlist follow the settings API's rules (ADR 0023).
 * For scripts, deployments and a first key without the page; the settings area makes keys through the
 * same ApiKeysService.
 */
export async function createKeyCommand(config: AuthConfig, argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        name: { type: 'string' },
        scopes: { type: 'string' },
        'organization-name': { type: 'string' },
        'organization-id': { type: 'string' },
        'expires-at': { type: 'string' },
        'allowed-ips': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
  } catch (e) {
    // An unknown option or a missing value: say which, and how to call it (not a stack trace).
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n${USAGE}\n`);
    return 2;
  }
  const { values } = parsed;
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (!values.name || !values.scopes || (!values['organization-name'] === !values['organization-id'])) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config), { logger: ['error'] });
  try {
    const keys = app.get(ApiKeysService);
    let organizationId: string;
    if (values['organization-id']) {
      const parsed = parsePublicId('org', values['organization-id']);
      if (!parsed) {
        process.stderr.write('--organization-id must look like org_<32 hex>\n');
        return 2;
      }
      organizationId = parsed;
    } else {
      organizationId = (await keys.createOrganization(values['organization-name']!)).id;
    }
    const scopes = values.scopes.split(/[ ,]+/).filter(Boolean);
    const { key, clientSecret } = await keys.createKey(organizationId, values.name, scopes, new Date(), {
      expiresAt: values['expires-at'],
      allowedIps: values['allowed-ips']?.split(/[ ,]+/).filter(Boolean),
    });
    process.stdout.write(
      `${JSON.stringify({
        organization_id: toPublicId('org', organizationId),
        id: key.id,
        name: key.name,
        client_id: key.client_id,
        client_secret: clientSecret,
        scopes: key.scopes,
        created_at: key.created_at,
        expires_at: key.expires_at,
        allowed_ips: key.allowed_ips,
      })}\n`,
    );
    return 0;
  } catch (e) {
    if (e instanceof InvalidApiKeyInput) {
      for (const error of e.errors) process.stderr.write(`${error.field}: ${error.message}\n`);
      return 2;
    }
    throw e;
  } finally {
    await app.close();
  }
}
