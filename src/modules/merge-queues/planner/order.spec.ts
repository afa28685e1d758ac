import { QueueDriver } from '@test/support/merge-queue-driver';
import { enqueueTogether, landAll } from '@test/support/merge-queue-builders';
import { checkStepInvariants, type MergeQueueOperation } from './index';

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

describe('queue order (order.ts)', () => {
  it('lands the cleared PRs of a bisected batch before PRs queued behind them', () => {
    const d = new QueueDriver({ maxParallel: 4, maxBatch: 4, minBatch: 4, flakyRetries: 1 });
    enqueueTogether(d, [1, 2, 3, 4]);
    d.complete();
    const [batch] = d.live();
    expect(batch.prNumbers).toEqual([1, 2, 3, 4]);
    d.report(batch.id, 'failure');
    // later PRs arrive while the batch is bisected: the chain does not take them
    for (const n of [5, 6, 7, 8]) d.enqueue(n);
    d.complete();
    expect(d.live().every((b) => b.role === 'part')).toBe(true);
    for (const n of [5, 6, 7, 8]) expect(d.entry(n).status).toBe('queued');
    const parts = d.live();
    expect(parts.map((p) => p.prNumbers)).toEqual([[1], [2], [3], [4]]);
    // the probes of #2 and #4 pass before the one of #1: they may not land ahead of #1
    d.report(parts[1].id, 'success');
    d.report(parts[3].id, 'success');
    expect(d.pending.some((o) => o.kind === 'land')).toBe(false);
    d.report(parts[2].id, 'failure');
    // #3 failed alone: it loses its place and is retried at the back of the line
    expect(d.entry(3).position).toBeGreaterThan(d.entry(8).position);
    d.report(parts[0].id, 'success');
    landAll(d, 80);
    const order = landingOrder(d);
    expect(order.slice(0, 3)).toEqual([1, 2, 4]);
    expect(order.indexOf(3)).toBe(order.length - 1);
    expect([...order].sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('gives a bisection the runners the chain cannot use while the chain waits behind it', () => {
    const d = new QueueDriver({ maxParallel: 4, maxBatch: 4, minBatch: 4, probeShare: 0.5 });
    enqueueTogether(d, [1, 2, 3, 4]);
    d.complete();
    const [batch] = d.live();
    d.send({ type: 'pause' });
    d.report(batch.id, 'failure');
    // one PR the chain may take (queued ahead of the suspects by priority), three runners left
    d.enqueue(9, 50);
    d.send({ type: 'resume' });
    const parts = d.live().filter((b) => b.role === 'part');
    const chain = d.live().filter((b) => b.role === 'chain');
    expect(chain.map((b) => b.prNumbers)).toEqual([[9]]);
    // the probe share (2 of 4) would leave a runner idle: the probes take the three the chain cannot use
    expect(parts.map((p) => p.prNumbers)).toEqual([[1, 2], [3], [4]]);
    landAll(d, 80);
    expect(landingOrder(d)).toEqual([9, 1, 2, 3, 4]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('stacks nothing past a failed candidate whose parent is unresolved, and blames it in its place', () => {
    const d = new QueueDriver({ maxParallel: 2, maxBatch: 2, minBatch: 2 });
    enqueueTogether(d, [1, 2, 3, 4]);
    d.complete();
    const [first, second] = d.live();
    expect(second.parentId).toBe(first.id);
    expect(second.prNumbers).toEqual([3, 4]);
    d.report(second.id, 'failure');
    for (const n of [5, 6]) d.enqueue(n);
    d.complete();
    // no batch is stacked on `first` beside the failed one (no Zuul continuation): #5 and #6 wait
    expect(d.entry(5).status).toBe('queued');
    expect(d.entry(6).status).toBe('queued');
    d.report(first.id, 'success');
    d.succeed(d.take('land'));
    expect(d.batch(second.id).status).toBe('failed');
    expect(d.entry(3).suspectGroup).not.toBeNull();
    landAll(d, 80);
    expect(landingOrder(d)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('withdraws a chain batch that would land PRs queued behind a held PR', () => {
    const d = new QueueDriver({ maxParallel: 4, maxBatch: 2, minBatch: 2 });
    enqueueTogether(d, [1, 2, 3, 4]);
    d.complete();
    const [first, second] = d.live();
    expect(first.prNumbers).toEqual([1, 2]);
    expect(second.prNumbers).toEqual([3, 4]);
    d.report(second.id, 'success');
    d.report(first.id, 'failure');
    // #1 and #2 are a suspect group now; the batch of #3 and #4 was built on the failed one
    expect(d.batch(second.id).status).toBe('withdrawn');
    expect(d.entry(3).status).toBe('queued');
    landAll(d, 80);
    expect(landingOrder(d)).toEqual([1, 2, 3, 4]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('the invariant checker rejects a land that overtakes a held PR', () => {
    const d = new QueueDriver({ maxParallel: 4, maxBatch: 4, minBatch: 4 });
    enqueueTogether(d, [1, 2, 3, 4]);
    d.complete();
    d.report(d.live()[0].id, 'failure');
    d.enqueue(5);
    const prev = d.state;
    // hand-made next state: #5 alone in a passing chain batch on the base, landing past the suspects
    const next = structuredClone(prev);
    next.revision += 1;
    const e5 = next.entries.find((e) => e.number === 5)!;
    e5.status = 'merging';
    e5.batchId = 'bx';
    next.batches.push({
      ...structuredClone(prev.batches[0]),
      id: 'bx',
      entryIds: [e5.id],
      prNumbers: [5],
      status: 'merging',
      role: 'chain',
      parentId: null,
      baseSha: prev.baseSha,
      candidateSha: 'cx',
      checks: [{ name: 'ci', state: 'success' }],
      operation: { id: 'opx', kind: 'land', outcome: 'pending' },
    });
    const land: MergeQueueOperation = { id: 'opx', kind: 'land', batchId: 'bx', candidateSha: 'cx', expectedBaseSha: prev.baseSha, prNumbers: [5] };
    const violations = checkStepInvariants(prev, next, [land]);
    expect(violations.some((v) => /land of bx overtakes held #1, #2, #3, #4/.test(v))).toBe(true);
  });
});
