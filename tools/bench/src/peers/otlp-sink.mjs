// An OTLP/HTTP receiver that keeps nothing: the collector the traced services of the benchmark export
// to, so that "tracing on" includes the export (serialising, sending) without a real collector's CPU.
// Prints `READY {"url":...}`; on SIGTERM prints how many export requests and bytes it took.
import { createServer } from 'node:http';

const port = Number(process.env.PORT ?? 4318);
let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (chunk) => (bytes += chunk.length));
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/v1/traces') requests++;
    // An empty ExportTraceServiceResponse: {} in JSON, zero bytes in protobuf.
    const json = (req.headers['content-type'] ?? '').includes('json');
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
    res.end(json ? '{}' : '');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`READY ${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`));
process.on('SIGTERM', () => {
  process.stderr.write(`otlp-sink: ${requests} export requests, ${bytes} bytes\n`);
  process.exit(0);
});
