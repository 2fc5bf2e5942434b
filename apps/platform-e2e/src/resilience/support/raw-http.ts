import { request } from 'node:http';
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON body, or null when the body is not JSON. */
  json: Record<string, unknown> | null;
}

function parse(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** One request with exactly these bytes and headers (node:http, no normalisation of the body). */
export function send(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<RawAnswer> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    // A request no answer comes to fails (status 0 to the callers that catch) rather than hang a trial.
    req.setTimeout(30000, () => req.destroy(new Error('no answer within 30 s')));
    if (body !== undefined) req.setHeader('content-length', Buffer.byteLength(body));
    req.end(body);
  });
}

/**
 * Writes raw bytes on a TCP connection, `pieces` apart by `gapMs`, and returns the status line's
 * code and the whole response (or status 0 when the server closed without answering).
 */
export function sendSlowly(baseUrl: string, pieces: Array<string | Buffer>, gapMs: number, timeoutMs = 30000): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1] ?? 0);
      const split = raw.indexOf('\r\n\r\n');
      const head = split >= 0 ? raw.slice(0, split) : raw;
      const headers: Record<string, string> = {};
      for (const line of head.split('\r\n').slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      let text = split >= 0 ? raw.slice(split + 4) : '';
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) text = dechunk(text);
      resolve({ status, headers, text, json: parse(text) });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(raw)?.[1];
      if (split >= 0 && length !== undefined && Buffer.byteLength(raw) - split - 4 >= Number(length)) finish();
    });
    socket.on('close', finish);
    socket.on('error', finish);
    socket.on('connect', async () => {
      for (const piece of pieces) {
        if (done) return;
        socket.write(piece);
        await new Promise((r) => setTimeout(r, gapMs));
      }
    });
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const i = rest.indexOf('\r\n');
    if (i < 0) return out;
    const size = parseInt(rest.slice(0, i), 16);
    if (!size) return out;
    out += rest.slice(i + 2, i + 2 + size);
    rest = rest.slice(i + 2 + size + 2);
  }
}
