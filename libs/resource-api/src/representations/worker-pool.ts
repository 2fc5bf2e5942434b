import { ProblemException } from '@invoicing/service-kit';
import type { Worker } from 'node:worker_threads';

export interface WorkerPoolOptions {
  /**
   * Starts one worker. It answers each `{ id, input }` message with `{ id, ok: true, output }` or
   * `{ id, ok: false, error }` (a message; never a stack: it may reach a log, not a client).
   */
  spawn(): Worker;
  /** Workers at most, those being ended included (started on demand, kept while the process runs). */
  size: number;
  /** Jobs waiting for a worker at most; past it, {@link WorkerPool.run} refuses with 503. */
  queue: number;
  /** A job running longer fails (503) and its worker is replaced: one job cannot hold a worker for good. */
  timeoutMs: number;
}

interface Job<I, O> {
  input: I;
  /** False once nobody waits for the answer (the request timed out, the caller went away): not started then. */
  wanted(): boolean;
  resolve(output: O): void;
  reject(error: unknown): void;
}

interface Slot<I, O> {
  worker: Worker;
  job: Job<I, O> | null;
  /** The id of the job's message: an answer to another (a timed-out one's) is ignored. */
  id: number;
  timer: NodeJS.Timeout | null;
  /** Being ended: takes no job, but still counts against `size` until its thread has stopped. */
  retiring: boolean;
}

const BUSY = () => new ProblemException(503, 'Too many documents are being rendered on this server; retry in 1 second.', undefined, { 'Retry-After': '1' });
const GONE = () => new ProblemException(503, 'The request was answered before its document was rendered.');

/**
 * CPU-heavy work off the event loop: a fixed number of worker threads, a bounded queue in front of
 * them, a time limit per job. A 500-line invoice's PDF takes seconds of CPU; rendered on the event
 * loop it would stall every other request of the instance, every tenant's, for that long. A worker
 * that dies (a crash, its heap limit) fails its job and is replaced; the others go on. Never more
 * than `size` threads, a dying one included, so the cores left to the event loop stay left.
 */
export class WorkerPool<I, O> {
  private readonly slots: Array<Slot<I, O>> = [];
  private readonly waiting: Array<Job<I, O>> = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly options: WorkerPoolOptions) {}

  /**
   * The output of `input`, once a worker has made it; rejects with the worker's error, or 503 when
   * the pool is full. `wanted` is asked when the job's turn comes: a job nobody waits for any more
   * is dropped instead of rendered.
   */
  run(input: I, wanted: () => boolean = () => true): Promise<O> {
    if (this.closed) return Promise.reject(ProblemException.unavailable());
    return new Promise<O>((resolve, reject) => {
      const job = { input, wanted, resolve, reject };
      const idle = this.slots.find((s) => s.job === null && !s.retiring);
      if (idle) return this.start(idle, job);
      if (this.slots.length < this.options.size) return this.start(this.spawn(), job);
      if (this.waiting.length >= this.options.queue) return reject(BUSY());
      this.waiting.push(job);
    });
  }

  /** Jobs running and waiting, and the threads (for tests and metrics). */
  get load(): { running: number; waiting: number; workers: number } {
    return { running: this.slots.filter((s) => s.job !== null).length, waiting: this.waiting.length, workers: this.slots.length };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) job.reject(ProblemException.unavailable());
    await Promise.all([...this.slots].map((s) => this.retire(s, ProblemException.unavailable())));
  }

  private spawn(): Slot<I, O> {
    const worker = this.options.spawn();
    // The pool does not keep the process alive: a service that has drained its requests exits.
    worker.unref();
    const slot: Slot<I, O> = { worker, job: null, id: 0, timer: null, retiring: false };
    this.slots.push(slot);
    worker.on('message', (message: { id: number; ok: boolean; output?: O; error?: string }) => this.settle(slot, message));
    // A worker that fails (an uncaught error, its heap limit) is gone: its job fails, the next job gets a new one.
    worker.on('error', (error) => void this.retire(slot, new Error(`worker failed: ${error.message}`)));
    worker.on('exit', (code) => void this.retire(slot, new Error(`worker exited with code ${code}`)));
    return slot;
  }

  private start(slot: Slot<I, O>, job: Job<I, O>): void {
    const id = ++this.nextId;
    slot.job = job;
    slot.id = id;
    slot.timer = setTimeout(() => {
      void this.retire(slot, new ProblemException(503, `Rendering took longer than ${this.options.timeoutMs / 1000} seconds; retry later.`, undefined, { 'Retry-After': '5' }));
    }, this.options.timeoutMs);
    slot.timer.unref();
    slot.worker.postMessage({ id, input: job.input });
  }

  private settle(slot: Slot<I, O>, message: { id: number; ok: boolean; output?: O; error?: string }): void {
    const job = slot.job;
    if (!job || slot.retiring || slot.id !== message.id) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = null;
    slot.timer = null;
    if (message.ok) job.resolve(message.output as O);
    else job.reject(new Error(`render failed: ${message.error ?? 'unknown error'}`));
    const next = this.nextWanted();
    if (next) this.start(slot, next);
  }

  /** The first waiting job someone still waits for; those nobody does are dropped on the way. */
  private nextWanted(): Job<I, O> | undefined {
    for (let job = this.waiting.shift(); job; job = this.waiting.shift()) {
      if (job.wanted()) return job;
      job.reject(GONE());
    }
    return undefined;
  }

  /**
   * Ends a worker (its job failing with `error`); once its thread has stopped, a new worker takes
   * the next waiting job, if any. Until then the slot counts against `size`.
   */
  private async retire(slot: Slot<I, O>, error: unknown): Promise<void> {
    if (slot.retiring || !this.slots.includes(slot)) return;
    slot.retiring = true;
    if (slot.timer) clearTimeout(slot.timer);
    const job = slot.job;
    slot.job = null;
    job?.reject(error);
    await slot.worker.terminate().catch(() => undefined);
    this.slots.splice(this.slots.indexOf(slot), 1);
    if (this.closed || this.slots.length >= this.options.size) return;
    const next = this.nextWanted();
    if (next) this.start(this.spawn(), next);
  }
}
