import { createServer, Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every connection and refuses new ones: the dependency is "down". */
  cut(): void;
  /** Accepts connections again. */
  restore(): void;
  close(): Promise<void>;
}

/**
 * A loopback TCP proxy in front of a real dependency, so a test can take the dependency away from one
 * service without stopping the shared server the other suites use.
 */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let down = false;
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
      client.pipe(upstream).pipe(client);
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
    },
    close: () =>
      new Promise<void>((resolve) => {
        down = true;
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
