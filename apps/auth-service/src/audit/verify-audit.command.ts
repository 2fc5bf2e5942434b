import { NestFactory } from '@nestjs/core';
import { parsePublicId } from '@invoicing/contracts';
import { parseArgs } from 'node:util';
import { AuditCliModule } from '../app.module';
import type { AuthConfig } from '../config/config';
import { verifyChainAsync } from './audit-chain';
import { AuditLog } from './audit-log';

const USAGE = 'usage: auth-service verify-audit --organization org_... [--anchor SEQ:HASH]';

/**
 * Walks an organization's audit chain in order and says whether it is intact: exit 0 and
 * `{"ok":true,"count","head"}` on stdout, or exit 1 naming the first altered, removed or reordered
 * record; exit 2 when it cannot tell (bad arguments, the database unreachable). `--anchor` is a
 * head kept elsewhere (the stream, an export): a chain rewritten or cut
 * behind it fails too (ADR 0024). Reads with the runtime role; changes nothing.
 */
export async function verifyAuditCommand(config: AuthConfig, argv: string[]): Promise<number> {
  let values: { organization?: string; anchor?: string };
  try {
    values = parseArgs({ args: argv, options: { organization: { type: 'string' }, anchor: { type: 'string' } }, strict: true }).values;
  } catch {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const organizationId = values.organization ? parsePublicId('org', values.organization) : null;
  const anchorMatch = values.anchor ? /^(\d+):([0-9a-f]{64})$/.exec(values.anchor) : null;
  if (!organizationId || (values.anchor && !anchorMatch)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  // Exit 2 when the chain could not be read at all (no database...), so 1 always means "broken".
  const app = await NestFactory.createApplicationContext(AuditCliModule.forRoot(config), { logger: ['error'] }).catch((e: unknown) => {
    process.stderr.write(`cannot verify: ${e instanceof Error ? e.message : String(e)}\n`);
    return null;
  });
  if (!app) return 2;
  try {
    const result = await verifyChainAsync(app.get(AuditLog).chain(organizationId), {
      organizationId: values.organization,
      anchor: anchorMatch ? { seq: Number(anchorMatch[1]), hash: anchorMatch[2] } : undefined,
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (!result.ok) process.stderr.write(`audit chain broken at record ${result.at.seq} (${result.at.id ?? 'missing'}): ${result.problem}: ${result.detail}\n`);
    return result.ok ? 0 : 1;
  } catch (e) {
    process.stderr.write(`cannot verify: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  } finally {
    await app.close();
  }
}
