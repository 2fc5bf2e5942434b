import { ConcurrencyGate } from './concurrency-gate';

/** The gate's promise of a slot, or a failed test when it refused. */
function admit(gate: ConcurrencyGate, key: string): Promise<() => void> {
  const entry = gate.enter(key);
  if (!entry) throw new Error(`refused ${key}`);
  return entry;
}

describe(ConcurrencyGate.name, () => {
  it('admits `concurrency` at once, queues `queue` more in order, refuses the rest, per key', async () => {
    const gate = new ConcurrencyGate(2, 1);
    const first = await admit(gate, 'a');
    const second = await admit(gate, 'a');
    let thirdAdmitted = false;
    const third = admit(gate, 'a').then((release) => {
      thirdAdmitted = true;
      return release;
    });
    expect(gate.enter('a')).toBeNull();
    expect(gate.load('a')).toEqual({ running: 2, waiting: 1 });
    // Another key neither waits nor is refused.
    const other = await admit(gate, 'b');
    other();

    await Promise.resolve();
    expect(thirdAdmitted).toBe(false);
    first();
    const releaseThird = await third;
    expect(thirdAdmitted).toBe(true);
    expect(gate.load('a')).toEqual({ running: 2, waiting: 0 });
    // A release called twice frees one slot only.
    first();
    expect(gate.load('a')).toEqual({ running: 2, waiting: 0 });
    second();
    releaseThird();
    expect(gate.load('a')).toEqual({ running: 0, waiting: 0 });
    expect(gate.load('b')).toEqual({ running: 0, waiting: 0 });
  });

  it('with no queue, refuses as soon as the slots are taken', async () => {
    const gate = new ConcurrencyGate(1, 0);
    const release = await admit(gate, 'a');
    expect(gate.enter('a')).toBeNull();
    release();
    expect(gate.enter('a')).not.toBeNull();
  });
});
