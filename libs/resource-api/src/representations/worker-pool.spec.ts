import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';
import { WorkerPool } from './worker-pool';

/** A worker from source: doubles a number after `ms`; 'crash' throws, 'exit' exits, 'fail' answers an error. */
const SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, input }) => {
  if (input.what === 'crash') throw new Error('boom');
  if (input.what === 'exit') process.exit(3);
  setTimeout(() => {
    if (input.what === 'fail') parentPort.postMessage({ id, ok: false, error: 'cannot' });
    else parentPort.postMessage({ id, ok: true, output: input.n * 2 });
  }, input.ms ?? 0);
});
`;

type Input = { n?: number; ms?: number; what?: 'crash' | 'exit' | 'fail' };
const pools: Array<WorkerPool<Input, number>> = [];
function pool(size: number, queue: number, timeoutMs = 5000): WorkerPool<Input, number> {
  const p = new WorkerPool<Input, number>({ spawn: () => new Worker(SOURCE, { eval: true }), size, queue, timeoutMs });
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe(WorkerPool.name, () => {
  it('runs jobs on at most `size` workers, the rest waiting in order; past the queue, 503', async () => {
    const p = pool(2, 2);
    const jobs = [1, 2, 3, 4].map((n) => p.run({ n, ms: 100 }));
    expect(p.load).toEqual({ running: 2, waiting: 2, workers: 2 });
    await expect(p.run({ n: 5 })).rejects.toMatchObject({ status: 503 });
    expect(await Promise.all(jobs)).toEqual([2, 4, 6, 8]);
    expect(p.load).toEqual({ running: 0, waiting: 0, workers: 2 });
  });

  it('fails the job of a worker that crashes or exits, and replaces the worker for the next one', async () => {
    const p = pool(1, 4);
    const crashed = p.run({ what: 'crash' });
    const after = p.run({ n: 21 });
    await expect(crashed).rejects.toThrow(/boom/);
    expect(await after).toBe(42);
    await expect(p.run({ what: 'exit' })).rejects.toThrow(/exited with code 3/);
    expect(await p.run({ n: 1 })).toBe(2);
  });

  it("answers a worker's error as a failure of that job only", async () => {
    const p = pool(1, 4);
    await expect(p.run({ what: 'fail' })).rejects.toThrow('render failed: cannot');
    expect(await p.run({ n: 2 })).toBe(4);
  });

  it('fails a job past its time limit with 503 and gives the next job a new worker', async () => {
    const p = pool(1, 4, 200);
    const slow = p.run({ n: 1, ms: 5000 });
    const next = p.run({ n: 3 });
    await expect(slow).rejects.toMatchObject({ status: 503 });
    expect(await next).toBe(6);
  });

  it('never runs more than `size` threads, one being ended included: a job arriving meanwhile waits for the replacement', async () => {
    /** A worker that answers only when told, and ends only when told. */
    class FakeWorker extends EventEmitter {
      readonly messages: Array<{ id: number; input: Input }> = [];
      endNow: () => void = () => undefined;
      postMessage(message: { id: number; input: Input }) {
        this.messages.push(message);
      }
      unref(): void {
        // Nothing keeps this fake alive.
      }
      terminate() {
        return new Promise<number>((resolve) => (this.endNow = () => resolve(1)));
      }
      answer(i = 0) {
        const { id, input } = this.messages[i];
        this.emit('message', { id, ok: true, output: (input.n ?? 0) * 2 });
      }
    }
    const spawned: FakeWorker[] = [];
    const p = new WorkerPool<Input, number>({ spawn: () => spawned[spawned.push(new FakeWorker()) - 1] as unknown as Worker, size: 1, queue: 4, timeoutMs: 50 });
    const slow = p.run({ n: 1 });
    await expect(slow).rejects.toMatchObject({ status: 503 });
    // Its worker is being ended (terminate has not returned): a new job waits rather than start a second thread.
    const next = p.run({ n: 21 });
    expect(spawned).toHaveLength(1);
    expect(p.load).toEqual({ running: 0, waiting: 1, workers: 1 });
    spawned[0].endNow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(spawned).toHaveLength(2);
    spawned[1].answer();
    expect(await next).toBe(42);
    // An answer from the ended worker, late, changes nothing.
    spawned[0].answer();
    expect(p.load).toEqual({ running: 0, waiting: 0, workers: 1 });
  });

  it('drops a waiting job nobody wants any more (its request answered meanwhile) instead of running it', async () => {
    const p = pool(1, 4);
    const first = p.run({ n: 1, ms: 200 });
    let wanted = true;
    const abandoned = p.run({ n: 2 }, () => wanted);
    const after = p.run({ n: 3 });
    wanted = false;
    expect(await first).toBe(2);
    await expect(abandoned).rejects.toMatchObject({ status: 503 });
    expect(await after).toBe(6);
  });
});
