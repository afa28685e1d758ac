import { QueueDriver } from '@test/support/merge-queue-driver';

const MIN = 60_000;
const START = ['prepare', 'publish', 'startCi'] as const;

/** A queue whose light runs average 20 min and heavy ones 50 (threshold 35 min). */
function driver(config: Record<string, number> = {}): QueueDriver {
  return new QueueDriver({ maxBatch: 1, minChainSuccess: 0, initialCiDurationMs: 20 * MIN, ...config });
}

function landNext(d: QueueDriver): void {
  d.succeed(d.take('land'));
}
describe('planner rules on CI weight', () => {
  it('a run still pending past the threshold teaches its entries that one of them is heavy', () => {
    const d = driver();
    d.enqueue(1);
    d.complete([...START]);
    expect(d.entry(1).heavyProbability).toBeNull();
    d.now = 30 * MIN;
    d.send({ type: 'tick' });
    expect(d.entry(1).heavyProbability).toBeNull();
    d.now = 40 * MIN;
    d.send({ type: 'tick' });
    const learned = d.entry(1).heavyProbability ?? 0;
    expect(learned).toBeGreaterThan(0.4);
    // the finished run does not teach the same thing twice
    d.now = 60 * MIN;
    d.report(d.live()[0].id, 'success');
    expect(d.entry(1).heavyProbability).toBe(learned);
    expect(d.state.stats.heavyCiMs).toBeGreaterThan(50 * MIN);
  });

  it('a light run makes its entries light and moves the light mean', () => {
    const d = driver();
    d.enqueue(1);
    d.complete([...START]);
    d.now = 18 * MIN;
    d.report(d.live()[0].id, 'success');
    expect(d.entry(1).heavyProbability).toBeLessThan(0.05);
    expect(d.state.stats.lightCiMs).toBeCloseTo(19.8 * MIN, -3);
  });

  /** PR 1's run passes after `minutes`; its batch is landing when PR 2 arrives. */
  function landingAfterRun(minutes: number): { d: QueueDriver; b1: string } {
    const d = driver();
    d.enqueue(1);
    d.complete([...START]);
    d.now = minutes * MIN;
    const [b1] = d.live();
    d.report(b1.id, 'success');
    expect(d.batch(b1.id).status).toBe('merging');
    d.enqueue(2);
    return { d, b1: b1.id };
  }

  it('does not stack a PR on a landing batch that holds a heavy PR: it waits and runs on the new base alone', () => {
    const { d } = landingAfterRun(60);
    expect(d.entry(2).status).toBe('queued');
    landNext(d);
    d.complete([...START]);
    const b2 = d.batch(d.entry(2).batchId ?? '');
    expect(b2.parentId).toBeNull();
    expect(b2.ciContentIds).toEqual(['e2']);
    expect(d.monitor.violations).toEqual([]);
  });

  it('stacks a PR on a landing batch whose run was light', () => {
    const { d, b1 } = landingAfterRun(15);
    const b2 = d.batch(d.entry(2).batchId ?? '');
    expect(b2.parentId).toBe(b1);
    d.complete([...START]);
    expect(d.batch(b2.id).ciContentIds).toEqual(['e1', 'e2']);
  });

  /** PR 1 runs heavy; PR 2 is stacked on it at `stackAt`; PR 1 lands at 60 min. */
  function heavyAhead(stackAt: number, pauseBeforeLand = false): QueueDriver {
    const d = driver({ initialHeavyRate: 0.3, speculationTolerance: 100 });
    d.enqueue(1);
    d.complete([...START]);
    d.now = 40 * MIN;
    d.send({ type: 'tick' });
    d.now = stackAt;
    d.enqueue(2);
    d.complete([...START]);
    expect(d.batch(d.entry(2).batchId ?? '').ciContentIds).toEqual(['e1', 'e2']);
    d.now = 60 * MIN;
    d.report(d.batch(d.entry(1).batchId ?? '').id, 'success');
    const land = d.take('land');
    if (pauseBeforeLand) d.send({ type: 'pause' });
    d.succeed(land);
    return d;
  }

  it('restarts a candidate that just started running the tests of a heavy PR which has now landed', () => {
    const d = heavyAhead(58 * MIN);
    expect(d.entry(1).status).toBe('merged');
    const restarted = d.state.batches.find((b) => b.prNumbers[0] === 2 && b.status === 'withdrawn');
    expect(restarted?.failureReason).toMatch(/restarted on the new base: .*#1, which landed/);
    expect(d.pending.some((o) => o.kind === 'cleanup' && o.batchId === restarted?.id)).toBe(true);
    expect(d.state.stats.restartedBatches).toBe(1);
    d.complete([...START]);
    const fresh = d.batch(d.entry(2).batchId ?? '');
    expect(fresh.id).not.toBe(restarted?.id);
    expect(fresh.parentId).toBeNull();
    expect(fresh.ciContentIds).toEqual(['e2']);
    expect(d.monitor.violations).toEqual([]);
  });

  it('keeps a candidate whose run is expected to end sooner than a fresh one would', () => {
    const d = heavyAhead(40 * MIN);
    expect(d.entry(1).status).toBe('merged');
    expect(d.state.stats.restartedBatches).toBe(0);
    expect(d.batch(d.entry(2).batchId ?? '').status).toBe('testing');
  });

  it('a paused queue restarts nothing: CI runs that exist may finish', () => {
    const d = heavyAhead(58 * MIN, true);
    expect(d.entry(1).status).toBe('merged');
    expect(d.batch(d.entry(2).batchId ?? '').status).toBe('testing');
    d.send({ type: 'resume' });
    expect(d.state.stats.restartedBatches).toBe(1);
  });
});
