/**
 * A render worker thread (render-pool.ts): one document per message, off the service's event loop.
 * Answers the bytes, or the error's message (never its stack: it may reach a log, not a client).
 */
import { parentPort } from 'node:worker_threads';
import { renderDocument, RenderJob } from './render-job';

parentPort?.on('message', async ({ id, input }: { id: number; input: RenderJob }) => {
  try {
    const output = await renderDocument(input);
    parentPort?.postMessage({ id, ok: true, output });
  } catch (e) {
    parentPort?.postMessage({ id, ok: false, error: e instanceof Error ? e.message : String(e) });
  }
});
