import { ProblemException } from '@invoicing/service-kit';
import type { Worker } from 'node:worker_threads';

export interface WorkerPoolOptions {
  /**
   * Starts one worker. It answers each `{ id, input }` message with `{ id, ok: true, output }` or
   * `{ id, ok: false, error }` (a message; never a stack: it may reach a log, not a client).
   */
  spawn(): Worker;
  /** Workers at most (started on demand, kept while the process runs). */
  size: number;
  /** Jobs waiting for a worker at most; past it, {@link WorkerPool.run} refuses with 503. */
  queue: number;
  /** A job running longer fails (503) and its worker is replaced: one job cannot hold a worker for good. */
  timeoutMs: number;
}

interface Job<I, O> {
  input: I;
  resolve(output: O): void;
  reject(error: unknown): void;
}

interface Slot<I, O> {
  worker: Worker;
  job: Job<I, O> | null;
  /** The id of the job's message: an answer to another (a timed-out one's) is ignored. */
  id: number;
  timer: NodeJS.Timeout | null;
}

/**
 * CPU-heavy work off the event loop: a fixed number of worker threads, a bounded queue in front of
 * them, a time limit per job. A 500-line invoice's PDF takes seconds of CPU; rendered on the event
 * loop it would stall every other request of the instance, every tenant's, for that long. A worker
 * that dies (a crash, its heap limit) fails its job and is replaced; the others go on.
 */
export class WorkerPool<I, O> {
  private readonly slots: Array<Slot<I, O>> = [];
  private readonly waiting: Array<Job<I, O>> = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly options: WorkerPoolOptions) {}

  /** The output of `input`, once a worker has made it; rejects with the worker's error, or 503 when the pool is full. */
  run(input: I): Promise<O> {
    if (this.closed) return Promise.reject(ProblemException.unavailable());
    return new Promise<O>((resolve, reject) => {
      const job = { input, resolve, reject };
      const idle = this.slots.find((s) => s.job === null);
      if (idle) return this.start(idle, job);
      if (this.slots.length < this.options.size) return this.start(this.spawn(), job);
      if (this.waiting.length >= this.options.queue) {
        reject(new ProblemException(503, 'Too many documents are being rendered on this server; retry in 1 second.', undefined, { 'Retry-After': '1' }));
        return;
      }
      this.waiting.push(job);
    });
  }

  /** Jobs running and waiting (for tests and metrics). */
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
    const slot: Slot<I, O> = { worker, job: null, id: 0, timer: null };
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
    if (!job || slot.id !== message.id) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = null;
    slot.timer = null;
    if (message.ok) job.resolve(message.output as O);
    else job.reject(new Error(`render failed: ${message.error ?? 'unknown error'}`));
    this.next(slot);
  }

  /** Gives the slot the next waiting job (when it is still in the pool). */
  private next(slot: Slot<I, O>): void {
    const job = this.waiting.shift();
    if (!job) return;
    if (this.slots.includes(slot)) this.start(slot, job);
    else this.start(this.spawn(), job);
  }

  /** Ends a worker (its job failing with `error`) and, when jobs wait, starts one in its place. */
  private async retire(slot: Slot<I, O>, error: unknown): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    if (slot.timer) clearTimeout(slot.timer);
    const job = slot.job;
    slot.job = null;
    job?.reject(error);
    await slot.worker.terminate().catch(() => undefined);
    if (!this.closed && this.waiting.length > 0) this.start(this.spawn(), this.waiting.shift()!);
  }
}
