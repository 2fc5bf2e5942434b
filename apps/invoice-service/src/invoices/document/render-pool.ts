import { WorkerPool } from '@invoicing/resource-api';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { renderDocument, RenderJob } from './render-job';

/**
 * Render workers per instance: one, on the two cores an instance is sized for (the other keeps
 * answering requests); more instances render more at once. Each organization has at most one render
 * at a time per instance anyway (DOCUMENT_RENDERS_PER_ORGANIZATION), so organizations take turns here.
 */
export const RENDER_WORKERS = 1;
/** Renders waiting for the worker, of all organizations (each has at most one here): past it, 503. */
export const RENDER_QUEUE = 64;
/**
 * A render running longer fails (503) and its worker is replaced; a 500-line PDF takes about 2 s.
 * Below the request's deadline (REQUEST_TIMEOUT_MS, 15 s), so that the failure is what the caller hears.
 */
export const RENDER_TIMEOUT_MS = 10_000;
/** The worker's heap: a 500-line PDF needs about 60 MB; a document past this fails, the service does not. */
const WORKER_HEAP_MB = 256;

const WORKER_SCRIPT = join(__dirname, 'render.worker.js');
/** Whether this is the build (a compiled worker beside this file) or the TypeScript sources (ts-jest): known at load. */
const COMPILED = existsSync(WORKER_SCRIPT);
let pool: WorkerPool<RenderJob, Uint8Array> | null = null;

/**
 * The document's bytes, made on a worker thread: a 500-line invoice's PDF is seconds of CPU, which on
 * the event loop would hold up every request of the instance, every organization's. Run from the
 * TypeScript sources (ts-jest), where there is no compiled worker script, it renders in this thread.
 */
export async function render(job: RenderJob, wanted: () => boolean): Promise<Buffer> {
  if (!COMPILED) return renderDocument(job);
  pool ??= new WorkerPool<RenderJob, Uint8Array>({
    spawn: () => new Worker(WORKER_SCRIPT, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } }),
    size: RENDER_WORKERS,
    queue: RENDER_QUEUE,
    timeoutMs: RENDER_TIMEOUT_MS,
  });
  // A Buffer arrives from the worker as a Uint8Array (structured clone).
  const bytes = await pool.run(job, wanted);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
