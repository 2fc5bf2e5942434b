import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A webhook receiver on loopback: records every request and answers what `respond` says (200 by
 * default). `stop()` and `start()` take it down and bring it back on the same port.
 */
export async function startReceiver(respond: (r: Received) => number = () => 200) {
  const received: Received[] = [];
  let server: Server | null = null;
  let port = 0;
  const listen = async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        received.push(r);
        res.writeHead(respond(r));
        res.end();
      });
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server!.address() as AddressInfo).port;
  };
  await listen();
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.closeAllConnections();
      server.close(() => resolve());
      server = null;
    });
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    /** Each JSON body with its headers. */
    events: () => received.map((r) => ({ ...(JSON.parse(r.body) as { id: string; type: string; data: { object: Record<string, unknown> } }), headers: r.headers, raw: r.body })),
    async waitFor(predicate: (all: Received[]) => boolean, timeoutMs = 15000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`receiver: not met within ${timeoutMs} ms (${received.length} received)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    stop,
    start: listen,
  };
}
