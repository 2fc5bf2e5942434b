// Baselines the benchmark compares our services with, each started as its own process:
//   MODE=hello  bare Fastify, GET /hello -> {"hello":"world"}
//   MODE=jwt    Fastify + fast-jwt: GET /hello verifies an HS256 Bearer token (verifier cache on,
//               as in our guard) and answers 401 without one; the floor of "a guarded route".
// Prints `READY {"port":N}` once listening; exits on SIGTERM.
import Fastify from 'fastify';
import { createVerifier } from 'fast-jwt';

const port = Number(process.env.PORT ?? 4200);
const mode = process.env.MODE ?? 'hello';
const app = Fastify({ logger: false });

if (mode === 'jwt') {
  const key = Buffer.from(process.env.JWT_SECRET_B64URL ?? '', 'base64url');
  const verify = createVerifier({
    key,
    algorithms: ['HS256'],
    allowedIss: process.env.JWT_ISSUER,
    allowedAud: process.env.JWT_AUDIENCE,
    cache: 10000,
  });
  app.get('/hello', async (request, reply) => {
    const header = request.headers.authorization ?? '';
    try {
      const claims = verify(header.slice(7));
      return { hello: claims.sub };
    } catch {
      return reply.code(401).send({ error: 'invalid_token' });
    }
  });
} else {
  app.get('/hello', async () => ({ hello: 'world' }));
}

await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`READY ${JSON.stringify({ port })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
