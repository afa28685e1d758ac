import { QueueDriver } from '../../../../test/support/merge-queue-driver';
import { enqueueTogether, landAll } from '../../../../test/support/merge-queue-builders';
import type { MergeQueueOperation } from './index';

/** PR numbers in the order they landed (the land operations of the batches that landed). */
function landingOrder(d: QueueDriver): number[] {
  const lands = d.issued.filter((o): o is Extract<MergeQueueOperation, { kind: 'land' }> => o.kind === 'land');
  const seen = new Set<string>();
  const out: number[] = [];
  for (const op of lands) {
    if (seen.has(op.batchId) || d.batch(op.batchId).status !== 'landed') continue;
    seen.add(op.batchId);
    out.push(...op.prNumbers);
  }
  return out;
}

/** Two chain batches [1, 2] and [3, 4] (the second stacked on the first) on four runners; the second fails first. */
function failedTip(config: Record<string, unknown> = {}) {
  const d = new QueueDriver({ maxParallel: 4, maxBatch: 2, minBatch: 2, earlyBisection: true, ...config });
  enqueueTogether(d, [1, 2, 3, 4]);
  d.complete();
  const [first, second] = d.live();
  expect(second.parentId).toBe(first.id);
  expect(second.prNumbers).toEqual([3, 4]);
  d.report(second.id, 'failure');
  return { d, first, second };
}

describe('early bisection of a chain batch that failed behind one still testing (bisection.ts bisectFailedTip)', () => {
  it('splits its PRs into parts stacked on the batch ahead, on the runners the chain cannot use', () => {
    const { d, first, second } = failedTip();
    expect(d.batch(second.id).status).toBe('withdrawn');
    const parts = d.live().filter((b) => b.role === 'part');
    expect(parts.map((p) => p.prNumbers)).toEqual([[3], [4]]);
    expect(parts.every((p) => p.parentId === first.id)).toBe(true);
    expect(d.entry(3).suspectGroup).not.toBeNull();
    expect(d.entry(3).suspectGroup).toBe(d.entry(4).suspectGroup);
    // PRs queued behind the suspects wait (queue order): the chain takes nothing past them
    for (const n of [5, 6]) d.enqueue(n);
    d.complete();
    expect(d.entry(5).status).toBe('queued');
    expect(
      d
        .live()
        .filter((b) => b.role === 'chain')
        .map((b) => b.id),
    ).toEqual([first.id]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('once the batch ahead lands, a passing part first in line lands as it is and a failing one is blamed', () => {
    const { d, first } = failedTip();
    const [p3, p4] = d.live().filter((b) => b.role === 'part');
    d.complete();
    d.report(p3.id, 'success');
    d.report(p4.id, 'failure');
    // both wait for the batch ahead: nothing is cleared or blamed yet
    expect(d.batch(p3.id).status).toBe('ready');
    expect(d.batch(p4.id).status).toBe('testing');
    expect(d.pending.some((o) => o.kind === 'land')).toBe(false);
    d.report(first.id, 'success');
    d.succeed(d.take('land'));
    // the part of #3 is on the new base now and first in line: it lands with no second run
    expect(d.batch(p3.id).parentId).toBeNull();
    const land = d.take('land');
    expect(land.batchId).toBe(p3.id);
    d.succeed(land);
    expect(d.entry(3).status).toBe('merged');
    // #4 failed on the base plus itself: it failed alone and is retried at the back of the line
    expect(d.batch(p4.id).status).toBe('failed');
    expect(d.entry(4).failuresAlone).toBe(1);
    for (const n of [5, 6]) d.enqueue(n);
    landAll(d, 80);
    expect(landingOrder(d)).toEqual([1, 2, 3, 5, 6, 4]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('when the batch ahead fails, the parts go with it and their PRs come back with no stain', () => {
    const { d, first } = failedTip();
    const parts = d.live().filter((b) => b.role === 'part');
    d.complete();
    d.report(parts[0].id, 'success');
    d.report(first.id, 'failure');
    expect(parts.every((p) => d.batch(p.id).status === 'withdrawn')).toBe(true);
    for (const n of [3, 4]) {
      expect(d.entry(n).suspectGroup).toBeNull();
      expect(d.entry(n).cleared).toBe(false);
    }
    // #1 and #2 are the suspects now
    expect(d.entry(1).suspectGroup).not.toBeNull();
    landAll(d, 80);
    expect(landingOrder(d)).toEqual([1, 2, 3, 4]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('counts the failed batch in the chain failure rate when the batch ahead lands', () => {
    const { d, first } = failedTip();
    d.complete();
    const before = d.state.stats.batchFailureRate;
    d.report(first.id, 'success');
    d.succeed(d.take('land'));
    // one landing (0) and then one failure (1) at the head, alpha 0.1
    const afterLand = before + 0.1 * (0 - before);
    expect(d.state.stats.batchFailureRate).toBeCloseTo(afterLand + 0.1 * (1 - afterLand), 10);
  });

  it('splits into as many parts as runners; parts beyond the free runners start when one frees (maxParallel holds)', () => {
    const d = new QueueDriver({ maxParallel: 4, maxBatch: 4, minBatch: 4, earlyBisection: true });
    enqueueTogether(d, [1, 2, 3, 4, 5, 6, 7, 8]);
    d.complete();
    const [first, second] = d.live();
    expect(second.prNumbers).toEqual([5, 6, 7, 8]);
    d.report(second.id, 'failure');
    const parts = d.live().filter((b) => b.role === 'part');
    expect(parts.map((p) => p.prNumbers)).toEqual([[5], [6], [7], [8]]);
    // three runners are free beside the batch ahead: three parts start building, the fourth waits
    const prepares = () => new Set(d.issued.filter((o) => o.kind === 'prepare').map((o) => o.batchId));
    expect(parts.filter((p) => prepares().has(p.id))).toHaveLength(3);
    d.complete();
    expect(d.batch(parts[3].id).status).toBe('preparing');
    expect(prepares().has(parts[3].id)).toBe(false);
    // the batch ahead passes: its runner is free, and the last part starts on it
    d.report(first.id, 'success');
    expect(prepares().has(parts[3].id)).toBe(true);
    landAll(d, 80);
    expect(landingOrder(d)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('leaves a failed tip alone when one of its PRs comes before a PR of the batch ahead (queue order)', () => {
    const d = new QueueDriver({ maxParallel: 4, maxBatch: 2, minBatch: 2, earlyBisection: true });
    enqueueTogether(d, [1, 2, 3, 4]);
    d.complete();
    const [first, second] = d.live();
    // #3 is raised above #1 and #2 after the batches formed: holding it would make the batch ahead overtake it
    d.send({ type: 'setPriority', entryId: d.entry(3).id, priority: 50 });
    d.report(second.id, 'failure');
    expect(d.live().some((b) => b.role === 'part')).toBe(false);
    expect(d.entry(3).suspectGroup).toBeNull();
    d.report(first.id, 'success');
    landAll(d, 80);
    expect(d.monitor.violations).toEqual([]);
  });

  it('leaves a failed tip alone with fewer than two free runners, or when earlyBisection is off (the default)', () => {
    for (const d of [failedTip({ earlyBisection: false }).d, failedTip({ earlyBisection: undefined }).d, failedTip({ maxParallel: 2 }).d]) {
      const chain = d.live();
      expect(chain.every((b) => b.role === 'chain')).toBe(true);
      expect(chain).toHaveLength(2);
      expect(d.entry(3).suspectGroup).toBeNull();
      landAll(d, 80);
      expect(d.monitor.violations).toEqual([]);
    }
  });
});
