import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OwnerStub {
  url: string;
  /** Objects the "owner service" knows, by public id. */
  objects: Map<string, Record<string, unknown>>;
  /** Authorization headers it received, to check that the caller's token was forwarded. */
  authorizations: string[];
  close(): Promise<void>;
}

/**
 * Stands in for another resource service's `/internal/v1/objects/:id` in the integration tier (the
 * services themselves meet in the end-to-end tests): 200 with the object when known, 404 otherwise.
 */
export async function startOwnerStub(): Promise<OwnerStub> {
  const objects = new Map<string, Record<string, unknown>>();
  const authorizations: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    authorizations.push(String(req.headers.authorization ?? ''));
    const match = /^\/internal\/v1\/objects\/([^/?]+)$/.exec(req.url ?? '');
    const object = match ? objects.get(decodeURIComponent(match[1])) : undefined;
    res.writeHead(object ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(object ?? { status: 404 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    objects,
    authorizations,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
