import { QueueDriver } from '../../../../test/support/merge-queue-driver';
import { enqueueTogether, landAll } from '../../../../test/support/merge-queue-builders';
import { checkStepInvariants, type MergeQueueOperation, type MergeQueueState } from './index';

/** A batch of #1-#4 on four runners that failed on the base: its group is what each test works on. */
function failedGroup(config: { flakyRetries?: number; exclusion?: boolean } = {}): QueueDriver {
  const d = new QueueDriver({ maxParallel: 4, maxBatch: 4, minBatch: 4, flakyRetries: 1, ...config });
  enqueueTogether(d, [1, 2, 3, 4]);
  d.complete();
  const [batch] = d.live();
  expect(batch.prNumbers).toEqual([1, 2, 3, 4]);
  d.report(batch.id, 'failure');
  d.complete();
  return d;
}

/** The live candidate of culprit by exclusion that leaves out #n. */
function without(d: QueueDriver, n: number) {
  const b = d.live().find((x) => x.exclusion?.excludes === `e${n}`);
  if (!b) throw new Error(`no candidate without #${n}`);
  return b;
}

function landed(d: QueueDriver): number[] {
  return d.issued
    .filter((o): o is Extract<MergeQueueOperation, { kind: 'land' }> => o.kind === 'land')
    .filter((o) => d.batch(o.batchId).status === 'landed')
    .flatMap((o) => o.prNumbers);
}

describe('culprit by exclusion (exclusion.ts)', () => {
  it('runs the group without each suspect, the PRs staying queued, and lands the one that passes at once', () => {
    const d = failedGroup();
    for (const n of [5, 6]) d.enqueue(n);
    d.complete();
    const candidates = d.live();
    expect(candidates.map((b) => b.prNumbers)).toEqual([
      [2, 3, 4],
      [1, 3, 4],
      [1, 2, 4],
      [1, 2, 3],
    ]);
    expect(candidates.every((b) => b.role === 'part' && b.parentId === null && b.status === 'testing')).toBe(true);
    // they share their PRs, so none holds them yet, and the chain takes nothing behind them
    for (const n of [1, 2, 3, 4, 5, 6]) expect(d.entry(n)).toMatchObject({ status: 'queued', batchId: null });
    d.report(without(d, 1).id, 'failure');
    d.report(without(d, 3).id, 'success');
    // the group without #3 passed: it lands #1, #2 and #4 in one go, and the other candidates are withdrawn
    const land = d.pending.find((o) => o.kind === 'land');
    expect(land).toMatchObject({ kind: 'land', prNumbers: [1, 2, 4] });
    expect(d.live().filter((b) => b.exclusion)).toHaveLength(1);
    d.complete(['land', 'cleanup']);
    expect([1, 2, 4].map((n) => d.entry(n).status)).toEqual(['merged', 'merged', 'merged']);
    landAll(d, 40);
    expect(landed(d)).toEqual([1, 2, 4, 5, 6, 3]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('counts a failure alone against the suspect left out and sends it to the back of the line', () => {
    const d = failedGroup();
    d.enqueue(5);
    d.complete();
    d.report(without(d, 2).id, 'success');
    const x = d.entry(2);
    // its solo retry starts at once, on a runner the withdrawn candidates freed
    expect(x).toMatchObject({ failuresAlone: 1, suspectGroup: null, cleared: false });
    expect(d.live().find((b) => b.prNumbers.join() === '2')?.role).toBe('part');
    expect(x.excludedBy).toBe(d.live().find((b) => b.prNumbers.join() === '1,3,4')?.id);
    expect(x.position).toBeGreaterThan(d.entry(5).position);
    expect(d.monitor.violations).toEqual([]);

    // with no flaky retry left, the PR left out fails outright
    const strict = failedGroup({ flakyRetries: 0 });
    strict.report(without(strict, 4).id, 'success');
    expect(strict.entry(4)).toMatchObject({ status: 'failed', failuresAlone: 1 });
    expect(strict.monitor.violations).toEqual([]);
  });

  it('falls back to probing each suspect when every candidate fails', () => {
    const d = failedGroup();
    for (const n of [1, 2, 3, 4]) d.report(without(d, n).id, 'failure');
    d.complete();
    const parts = d.live();
    expect(parts.every((b) => b.role === 'part' && !b.exclusion)).toBe(true);
    expect(parts.map((b) => b.prNumbers)).toEqual([[1], [2], [3], [4]]);
    expect([1, 2, 3, 4].every((n) => d.entry(n).exclusionTried)).toBe(true);
    expect(d.monitor.violations).toEqual([]);
  });

  it('withdraws the candidates when a PR they hold changes, and plans them again', () => {
    const d = failedGroup();
    d.send({ type: 'setAside', entryId: 'e1', setAside: true });
    d.complete();
    // #1 set aside: the group is planned again from #2-#4
    expect(d.live().map((b) => b.prNumbers)).toEqual([
      [3, 4],
      [2, 4],
      [2, 3],
    ]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('is off when the queue says so: the group is probed as before', () => {
    const d = failedGroup({ exclusion: false });
    expect(d.live().map((b) => b.prNumbers)).toEqual([[1], [2], [3], [4]]);
  });
});

describe('the order invariant with culprit by exclusion (invariants.ts)', () => {
  /** A state with #1-#4 a suspect group (held) and #5 queued behind them. */
  function heldState(): { d: QueueDriver; s: MergeQueueState } {
    const d = failedGroup({ exclusion: false });
    d.enqueue(5);
    return { d, s: d.state };
  }

  it('still rejects a land that overtakes a held PR', () => {
    const { s } = heldState();
    const next: MergeQueueState = structuredClone(s);
    next.revision += 1;
    const b = next.batches.find((x) => x.status !== 'failed' && x.prNumbers.includes(4));
    if (!b) throw new Error('no probe of #4');
    // pretend the probe of #4 passed and lands while #1-#3 are still being probed
    b.status = 'merging';
    b.candidateSha = 'c4';
    b.checks = [{ name: 'ci', state: 'success' }];
    const e4 = next.entries.find((e) => e.number === 4);
    if (e4) e4.status = 'merging';
    const land: MergeQueueOperation = { id: 'opX', kind: 'land', batchId: b.id, candidateSha: 'c4', expectedBaseSha: next.baseSha, prNumbers: [4] };
    const found = checkStepInvariants(s, next, [land]);
    expect(found.some((v) => v.includes('overtakes'))).toBe(true);
  });

  it('rejects a PR sent back in line without a failure of its own, or failed by exclusion without a passing candidate', () => {
    const { s } = heldState();
    const moved: MergeQueueState = structuredClone(s);
    moved.revision += 1;
    const one = moved.entries.find((e) => e.number === 1);
    if (!one) throw new Error('no #1');
    one.position = 99;
    expect(checkStepInvariants(s, moved, []).some((v) => v.includes('moved in line'))).toBe(true);

    const excluded: MergeQueueState = structuredClone(s);
    excluded.revision += 1;
    const two = excluded.entries.find((e) => e.number === 2);
    if (!two) throw new Error('no #2');
    two.failuresAlone += 1;
    two.position = 99;
    two.excludedBy = excluded.batches[0].id;
    expect(checkStepInvariants(s, excluded, []).some((v) => v.includes('failed by exclusion without a passing candidate'))).toBe(true);
  });
});
