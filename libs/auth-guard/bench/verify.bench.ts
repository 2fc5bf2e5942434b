/**
 * Guard microbenchmark: what one request costs to authenticate, next to the floor of a raw
 * HMAC-SHA256 over the same token's signing input. Run: `npx nx run auth-guard:bench`.
 * Prints figures; asserts nothing (speed is measured here, not in tests).
 */
import 'reflect-metadata';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { KafkaEventTransport } from '@invoicing/event-bus';
import { createSigner, createVerifier } from 'fast-jwt';
import { createHmac, randomBytes } from 'node:crypto';
import { AccessTokenGuard } from '../src/nest/access-token.guard';
import { AccessTokenStrategy } from '../src/nest/access-token.strategy';
import { SCOPES_METADATA } from '../src/nest/scopes.decorator';
import { RevocationFeed } from '../src/revocation/revocation-feed';
import { RevocationView } from '../src/revocation/revocation-view';
import { AccessTokenVerifier } from '../src/verification/access-token-verifier';

const key = randomBytes(32);
const keys = new Map([['k1', key]]);
const sign = createSigner({ key, algorithm: 'HS256', kid: 'k1', header: { alg: 'HS256', typ: 'at+jwt' } });

function token(i: number): string {
  const iat = Math.floor(Date.now() / 1000);
  return sign({
    iss: 'https://api.example',
    aud: 'invoicing-api',
    sub: `key_${i}`,
    client_id: 'ak_live_x',
    org_id: `org_${'1'.repeat(32)}`,
    scope: 'read:invoices write:invoices',
    sid: `ses_${i}`,
    jti: `j${i}`,
    iat,
    exp: iat + 3600,
  });
}

function measure(label: string, iterations: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(iterations, 20000); i++) fn(i); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn(i);
  const perOpUs = Number(process.hrtime.bigint() - start) / iterations / 1000;
  console.log(`${label.padEnd(58)} ${perOpUs.toFixed(2).padStart(8)} µs/op  ${Math.round(1e6 / perOpUs).toLocaleString('en').padStart(10)} op/s`);
  return perOpUs;
}

async function main(): Promise<void> {
  const distinct = Array.from({ length: 5000 }, (_, i) => token(i));
  const one = distinct[0];
  const [h, p] = one.split('.');
  const input = `${h}.${p}`;
  const view = new RevocationView();
  const verifier = new AccessTokenVerifier({ keys, issuer: 'https://api.example', audience: 'invoicing-api' });
  // The "cold" figure: the same checks with fast-jwt's cache off, i.e. a token seen for the first time.
  const coldVerify = createVerifier({ key, algorithms: ['HS256'], allowedIss: 'https://api.example', allowedAud: 'invoicing-api', checkTyp: 'at+jwt' });

  // Never started: no broker here, so the staleness check is a null test, not the clock read of a
  // running service (one Date.now() per request, tens of nanoseconds).
  const feed = new RevocationFeed(view, new KafkaEventTransport({ brokers: [] }), { service: 'bench' });
  const strategy = new AccessTokenStrategy(verifier, view, feed);
  const reflector = new Reflector();
  const guard = new AccessTokenGuard(reflector, strategy);
  class Controller {
    handler(): void {}
  }
  const handler = Controller.prototype.handler;
  Reflect.defineMetadata(SCOPES_METADATA, ['read:invoices'], handler);
  const reply = {};
  // What Nest builds for every request before it runs the guards (GuardsConsumer.createContext).
  const context = (t: string) => new ExecutionContextHost([{ headers: { authorization: `Bearer ${t}` } }, reply, undefined], Controller, handler);

  console.log(`node ${process.version}, ${process.arch}; token of ${one.length} bytes`);
  const n = 200000;
  const raw = measure('raw HMAC-SHA256 over the signing input (node:crypto)', n, () => createHmac('sha256', key).update(input).digest());
  measure('fast-jwt verify, no cache (signature + claims)', n, (i) => coldVerify(distinct[i % distinct.length]));
  measure('AccessTokenVerifier.verify (kid lookup, cache warm)', n, (i) => verifier.verify(distinct[i % distinct.length]));
  measure('AccessTokenStrategy.validate (verify + revocation view)', n, (i) => strategy.validate(distinct[i % distinct.length]));
  const full = measure('AccessTokenGuard.canActivate (strategy + scopes), full', n, (i) =>
    guard.canActivate(context(distinct[i % distinct.length])),
  );
  console.log(`guard cost / raw HMAC = ${(full / raw).toFixed(1)}x`);
}

void main();
