import { createServer, Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every connection and refuses new ones: the dependency is "down". */
  cut(): void;
  /** Accepts connections again (and ends any latency). */
  restore(): void;
  /** Holds every chunk, both ways, this long before passing it on: the dependency is "slow". */
  delay(ms: number): void;
  close(): Promise<void>;
}

/**
 * A loopback TCP proxy in front of a real dependency, so a test can take the dependency away from one
 * service without stopping the shared server the other suites use.
 */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let down = false;
  let latencyMs = 0;
  // Chunks keep their order: each waits for the later of its own deadline and the previous one's.
  const forward = (from: Socket, to: Socket) => {
    let last = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      if (latencyMs === 0) {
        to.write(chunk);
        return;
      }
      const due = Date.now() + latencyMs;
      last = last.then(() => new Promise<void>((r) => setTimeout(r, Math.max(0, due - Date.now())))).then(() => {
        if (!to.destroyed) to.write(chunk);
      });
    });
  };
  const server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.connect(targetPort, targetHost, () => {
      forward(client, upstream);
      forward(upstream, client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    cut() {
      down = true;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore() {
      down = false;
      latencyMs = 0;
    },
    delay(ms: number) {
      latencyMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        down = true;
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
