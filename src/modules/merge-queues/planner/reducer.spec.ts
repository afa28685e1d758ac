import { QueueDriver } from '@test/support/merge-queue-driver';
import { enqueueTogether, landAll, landing } from '@test/support/merge-queue-builders';
import { checkStepInvariants, createMergeQueueState, type MergeQueueEvent, reduceMergeQueue } from './index';

/** The land's outcome is lost; the readBack then shows the base did not move (the candidate is published and tested). */
function landUnknownThenNotLanded(d: QueueDriver, batchId: string, landId: string): void {
  d.send({ type: 'operationUnknown', operationId: landId });
  const readBack = d.take('readBack');
  d.send({
    type: 'operationSucceeded',
    operationId: readBack.id,
    readBack: { baseSha: 'base0', candidateSha: d.batch(batchId).candidateSha, candidateLanded: false, published: true, ciStarted: true },
  });
}

describe(reduceMergeQueue.name, () => {
  it('walks one PR through prepare, publish, startCi, checks and land, counting revisions', () => {
    const d = new QueueDriver();
    const ops = d.enqueue(1);
    expect(ops.map((o) => o.kind)).toEqual(['prepare']);
    expect(d.state.status).toBe('active');
    expect(d.entry(1).status).toBe('testing');
    d.complete(['prepare']);
    expect(d.pending.map((o) => o.kind)).toEqual(['publish']);
    d.complete(['publish']);
    expect(d.pending.map((o) => o.kind)).toEqual(['startCi']);
    const [b] = d.live();
    expect(b.status).toBe('testing');
    expect(b.checks).toEqual([{ name: 'ci', state: 'pending' }]);
    d.complete(['startCi']);
    d.report(b.id, 'success');
    const land = d.take('land');
    expect(land).toMatchObject({ kind: 'land', batchId: b.id, expectedBaseSha: 'base0', prNumbers: [1] });
    expect(d.entry(1).status).toBe('merging');
    d.succeed(land);
    expect(d.batch(b.id).status).toBe('landed');
    expect(d.entry(1).status).toBe('merged');
    expect(d.state.baseSha).toBe(b.candidateSha);
    expect(d.state.status).toBe('idle');
    expect(d.pending.map((o) => o.kind)).toContain('cleanup');
    expect(d.state.revision).toBe(6);
    expect(d.monitor.violations).toEqual([]);
  });

  it('ignores duplicate and stale events without bumping the revision', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    const prepare = d.take('prepare');
    d.send({ type: 'operationSucceeded', operationId: prepare.id, candidateSha: 'c1' });
    const before = d.state;
    d.send({ type: 'operationSucceeded', operationId: prepare.id, candidateSha: 'c1' });
    d.send({ type: 'checkReported', batchId: 'nope', candidateSha: 'x', name: 'ci', state: 'success' });
    d.enqueue(1);
    expect(d.state).toBe(before);
  });

  it('a new title changes only the live entry title: same batches, no operation; a final entry or the same title changes nothing', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    d.complete(['prepare']);
    const before = d.state;
    const ops = d.send({ type: 'titleChanged', entryId: 'e1', title: 'Fix the widget' });
    expect(ops).toEqual([]);
    expect(d.state.revision).toBe(before.revision + 1);
    expect(d.entry(1).title).toBe('Fix the widget');
    expect({ ...d.state, revision: 0, entries: [] }).toEqual({ ...before, revision: 0, entries: [] });
    expect(d.state.entries.map((e) => ({ ...e, title: null }))).toEqual(before.entries.map((e) => ({ ...e, title: null })));
    const same = d.state;
    d.send({ type: 'titleChanged', entryId: 'e1', title: 'Fix the widget' });
    expect(d.state).toBe(same);
    d.send({ type: 'remove', entryId: 'e1' });
    const removed = d.state;
    d.send({ type: 'titleChanged', entryId: 'e1', title: 'Too late' });
    expect(d.state).toBe(removed);
    expect(d.monitor.violations).toEqual([]);
  });

  it('speculates: candidate k is built on candidate k-1, up to maxParallel batches', () => {
    const d = new QueueDriver({ maxBatch: 1, maxParallel: 3, minChainSuccess: 0 });
    for (const n of [1, 2, 3, 4]) d.enqueue(n);
    const live = d.live();
    expect(live).toHaveLength(3);
    expect(live.map((b) => b.prNumbers)).toEqual([[1], [2], [3]]);
    expect(live[1].parentId).toBe(live[0].id);
    // the child waits for its parent's candidate before it can be prepared
    expect(d.pending.filter((o) => o.kind === 'prepare')).toHaveLength(1);
    d.complete(['prepare']);
    const prepares = d.issued.filter((o) => o.kind === 'prepare');
    expect(prepares).toHaveLength(3);
    expect(prepares[1]).toMatchObject({ baseSha: d.batch(live[0].id).candidateSha });
    expect(d.entry(4).status).toBe('queued');
    landAll(d);
    expect([1, 2, 3, 4].map((n) => d.entry(n).status)).toEqual(['merged', 'merged', 'merged', 'merged']);
    expect(d.monitor.violations).toEqual([]);
  });

  it('lands in order: a ready batch waits for the one ahead', () => {
    const d = new QueueDriver({ maxBatch: 1, minChainSuccess: 0 });
    d.enqueue(1);
    d.enqueue(2);
    d.complete();
    const [a, b] = d.live();
    d.report(b.id, 'success');
    expect(d.batch(b.id).status).toBe('ready');
    expect(d.pending.some((o) => o.kind === 'land')).toBe(false);
    d.report(a.id, 'success');
    d.succeed(d.take('land'));
    const second = d.take('land');
    expect(second.batchId).toBe(b.id);
    d.succeed(second);
    expect(d.entry(2).status).toBe('merged');
  });

  it('batches several PRs and bisects a failed batch into parts on the same base', () => {
    const d = new QueueDriver({ maxParallel: 4, maxBatch: 4, minBatch: 4 });
    enqueueTogether(d, [1, 2, 3, 4]);
    d.complete();
    const [batch] = d.live();
    expect(batch.prNumbers).toEqual([1, 2, 3, 4]);
    d.report(batch.id, 'failure');
    expect(d.batch(batch.id).status).toBe('failed');
    const parts = d.live();
    expect(parts.every((p) => p.role === 'part' && p.baseSha === 'base0')).toBe(true);
    expect(parts.map((p) => p.prNumbers)).toEqual([[1], [2], [3], [4]]);
    d.complete();
    d.report(parts[2].id, 'failure');
    d.report(parts[0].id, 'success');
    d.succeed(d.take('land'));
    expect(d.entry(1).status).toBe('merged');
    // parts 2 and 4 ran on the old base: their result is evidence, not a landable candidate
    d.report(parts[1].id, 'success');
    d.report(parts[3].id, 'success');
    expect(d.entry(2).cleared).toBe(true);
    expect(d.entry(3).failuresAlone).toBe(1);
    landAll(d);
    expect(d.entry(2).status).toBe('merged');
    expect(d.entry(4).status).toBe('merged');
    expect(d.monitor.violations).toEqual([]);
  });

  it('retries a PR that failed alone within the flaky budget, then fails it', () => {
    const d = new QueueDriver({ flakyRetries: 1 });
    d.enqueue(7);
    d.complete();
    d.report(d.live()[0].id, 'failure');
    expect(d.entry(7).status).toBe('testing');
    expect(d.entry(7).failuresAlone).toBe(1);
    d.complete();
    const retry = d.live()[0];
    expect(retry.role).toBe('part');
    d.report(retry.id, 'failure');
    expect(d.entry(7).status).toBe('failed');
    expect(d.state.status).toBe('idle');
  });

  it('lands a PR whose first solo failure was spurious', () => {
    const d = new QueueDriver({ flakyRetries: 1 });
    d.enqueue(7);
    d.complete();
    d.report(d.live()[0].id, 'failure');
    landAll(d);
    expect(d.entry(7).status).toBe('merged');
  });

  it('counts a required check that does not report within the timeout as failed', () => {
    const d = new QueueDriver({ checkTimeoutMs: 1000, flakyRetries: 0 });
    d.enqueue(1);
    d.complete();
    d.now = 999;
    const before = d.state;
    d.send({ type: 'tick' });
    expect(d.state).toBe(before);
    d.now = 1000;
    d.send({ type: 'tick' });
    expect(d.entry(1).status).toBe('failed');
    expect(d.state.batches[0].failureReason).toMatch(/did not report/);
  });

  it('plans higher priority first, then arrival order', () => {
    const d = new QueueDriver({ maxParallel: 1, maxBatch: 1 });
    d.send({ type: 'pause' });
    d.enqueue(1);
    d.enqueue(2, 5);
    d.enqueue(3, 5);
    d.send({ type: 'resume' });
    expect(d.live()[0].prNumbers).toEqual([2]);
  });

  it('urgent rule: an urgent PR withdraws batches still testing', () => {
    const d = new QueueDriver({ maxBatch: 1, minChainSuccess: 0 });
    d.enqueue(1);
    d.enqueue(2);
    d.complete();
    const [a] = d.live();
    d.report(a.id, 'success');
    d.enqueue(9, 100);
    const live = d.live();
    expect(d.batch(a.id).status).toBe('merging');
    expect(live.map((b) => b.prNumbers)).toEqual([[1], [9], [2]]);
    expect(d.entry(2).status).toBe('testing');
    expect(d.state.batches.some((b) => b.status === 'withdrawn' && b.prNumbers[0] === 2)).toBe(true);
  });

  it('skips entries set aside and withdraws a batch whose entry is set aside', () => {
    const d = new QueueDriver({ maxBatch: 2, minBatch: 2 });
    d.enqueue(1);
    d.enqueue(2);
    const [b] = d.live();
    d.send({ type: 'setAside', entryId: 'e1', setAside: true });
    expect(d.batch(b.id).status).toBe('withdrawn');
    expect(d.entry(1).status).toBe('queued');
    expect(d.live().map((x) => x.prNumbers)).toEqual([[2]]);
  });

  it('blocks a conflicting entry with a readable reason and carries on with the others', () => {
    const d = new QueueDriver({ maxBatch: 3, minBatch: 3 });
    enqueueTogether(d, [1, 2, 3]);
    const prepare = d.take('prepare');
    d.send({
      type: 'operationFailed',
      operationId: prepare.id,
      reason: 'src/app.ts conflicts with the candidate',
      conflictEntryId: 'e2',
    });
    expect(d.entry(2).status).toBe('blocked');
    expect(d.entry(2).block).toMatch(/Merge conflict while building candidate b1: src\/app.ts/);
    expect(d.live().map((x) => x.prNumbers)).toEqual([[1, 3]]);
    d.send({ type: 'headUpdated', entryId: 'e2', headSha: 'h2b' });
    expect(d.entry(2).status).not.toBe('blocked');
    expect(d.entry(2).block).toBeNull();
  });

  it('withdraws and re-queues on a new head commit, and withdraws on removal', () => {
    const d = new QueueDriver({ maxBatch: 1, minChainSuccess: 0 });
    d.enqueue(1);
    d.enqueue(2);
    d.complete();
    const [a, b] = d.live();
    d.send({ type: 'headUpdated', entryId: 'e1', headSha: 'h1b' });
    expect(d.batch(a.id).status).toBe('withdrawn');
    expect(d.batch(b.id).status).toBe('withdrawn');
    expect(d.entry(1).headSha).toBe('h1b');
    const fresh = d.live();
    expect(fresh.map((x) => x.prNumbers)).toEqual([[1], [2]]);
    d.send({ type: 'remove', entryId: 'e2' });
    expect(d.entry(2).status).toBe('removed');
    expect(d.batch(fresh[1].id).status).toBe('withdrawn');
    expect(d.monitor.violations).toEqual([]);
  });

  it('defers a removal that arrives while the land is in flight', () => {
    const { d, land } = landing();
    d.send({ type: 'remove', entryId: 'e1' });
    expect(d.entry(1).status).toBe('merging');
    d.send({ type: 'operationFailed', operationId: land.id, reason: 'base moved', baseSha: 'other' });
    expect(d.entry(1).status).toBe('removed');
    expect(d.state.baseSha).toBe('other');
  });

  it('pause: records checks and readiness but neither plans nor lands; resume lands in order', () => {
    const d = new QueueDriver({ maxBatch: 1, minChainSuccess: 0 });
    d.enqueue(1);
    d.enqueue(2);
    d.complete();
    d.send({ type: 'pause' });
    expect(d.state.status).toBe('paused');
    d.enqueue(3);
    expect(d.entry(3).status).toBe('queued');
    for (const b of d.live()) d.report(b.id, 'success');
    expect(d.live().every((b) => b.status === 'ready')).toBe(true);
    expect(d.pending.some((o) => o.kind === 'land' || o.kind === 'prepare')).toBe(false);
    d.send({ type: 'resume' });
    expect(d.take('land')).toMatchObject({ prNumbers: [1] });
    expect(d.entry(3).status).toBe('testing');
  });

  it('disable withdraws in-flight batches and keeps entries queued', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    d.complete();
    d.send({ type: 'disable' });
    expect(d.state.status).toBe('disabled');
    expect(d.live()).toHaveLength(0);
    expect(d.entry(1).status).toBe('queued');
    d.enqueue(2);
    expect(d.live()).toHaveLength(0);
    d.send({ type: 'enable' });
    expect([d.entry(1).status, d.entry(2).status]).toEqual(['testing', 'testing']);
  });

  it('an unknown outcome makes the batch reconciling and asks for readBack before anything else', () => {
    const d = new QueueDriver({ maxBatch: 1, minChainSuccess: 0 });
    d.enqueue(1);
    d.complete();
    d.report(d.live()[0].id, 'success');
    const land = d.take('land');
    d.send({ type: 'operationUnknown', operationId: land.id });
    const [b] = d.live();
    expect(b.status).toBe('reconciling');
    expect(b.operation).toMatchObject({ kind: 'readBack', outcome: 'pending' });
    const readBack = d.take('readBack');
    d.enqueue(2);
    expect(d.pending.filter((o) => o.kind !== 'cleanup')).toEqual([]);
    d.send({
      type: 'operationSucceeded',
      operationId: readBack.id,
      readBack: {
        baseSha: land.kind === 'land' ? land.candidateSha : '',
        candidateSha: land.kind === 'land' ? land.candidateSha : null,
        candidateLanded: true,
        published: true,
        ciStarted: true,
      },
    });
    expect(d.entry(1).status).toBe('merged');
    expect(d.entry(2).status).toBe('testing');
  });

  it('re-issues the interrupted step when the readBack shows it did not happen', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    const prepare = d.take('prepare');
    d.send({ type: 'operationUnknown', operationId: prepare.id });
    const readBack = d.take('readBack');
    d.send({
      type: 'operationSucceeded',
      operationId: readBack.id,
      readBack: { baseSha: 'base0', candidateSha: null, candidateLanded: false, published: false, ciStarted: false },
    });
    expect(d.live()[0].status).toBe('preparing');
    expect(d.take('prepare').batchId).toBe(d.live()[0].id);
  });

  it('waits to blame a failing batch until everything ahead has landed', () => {
    const d = new QueueDriver({ maxBatch: 1, minChainSuccess: 0 });
    for (const n of [1, 2, 3]) d.enqueue(n);
    d.complete();
    const [a, b, c] = d.live();
    d.report(b.id, 'failure');
    expect(d.batch(b.id).status).toBe('testing');
    expect(d.batch(c.id).status).toBe('withdrawn');
    d.report(a.id, 'failure');
    // the batch ahead failed first: the second PR was only collateral
    expect(d.batch(a.id).status).toBe('failed');
    expect(d.batch(b.id).status).toBe('withdrawn');
    expect(d.entry(2).failuresAlone).toBe(0);
  });

  it('keeps the state plain JSON and is deterministic', () => {
    const events: MergeQueueEvent[] = [
      { type: 'enqueue', at: 1, entry: { id: 'a', number: 1, headSha: 'h', url: 'u' } },
      { type: 'enqueue', at: 2, entry: { id: 'b', number: 2, headSha: 'h', url: 'u' } },
    ];
    const run = () => events.reduce((s, e) => reduceMergeQueue(s, e).state, createMergeQueueState({ baseSha: 'b0' }));
    const one = run();
    expect(JSON.parse(JSON.stringify(one))).toEqual(one);
    expect(run()).toEqual(one);
  });
  describe('regressions', () => {
    function readyBeforeStartCiOutcome() {
      const d = new QueueDriver({ maxBatch: 1, minChainSuccess: 0 });
      d.enqueue(1);
      d.enqueue(2);
      d.complete(['prepare', 'publish', 'cleanup']);
      const [a, b] = d.live();
      const startB = d.pending.find((o) => o.kind === 'startCi' && o.batchId === b.id);
      if (!startB) throw new Error('no startCi for the second batch');
      d.pending = d.pending.filter((o) => o !== startB);
      d.complete(['startCi']);
      // CI reports on the second candidate before its startCi outcome comes back
      d.report(b.id, 'success');
      expect(d.batch(b.id).status).toBe('ready');
      return { d, a, b, startB };
    }

    it('A: a startCi that ends unknown after its checks passed does not throw and the batch lands', () => {
      const { d, a, b, startB } = readyBeforeStartCiOutcome();
      expect(() => d.send({ type: 'operationUnknown', operationId: startB.id })).not.toThrow();
      expect(d.batch(b.id).status).toBe('ready');
      expect(d.pending.some((o) => o.kind === 'readBack')).toBe(false);
      d.report(a.id, 'success');
      d.complete(['land', 'cleanup']);
      expect([d.entry(1).status, d.entry(2).status]).toEqual(['merged', 'merged']);
      expect(d.monitor.violations).toEqual([]);
    });

    it('A: a startCi that fails after its checks passed does not withdraw the batch', () => {
      const { d, a, b, startB } = readyBeforeStartCiOutcome();
      d.send({ type: 'operationFailed', operationId: startB.id, reason: 'runner lost' });
      expect(d.batch(b.id).status).toBe('ready');
      d.report(a.id, 'success');
      d.complete(['land', 'cleanup']);
      expect([d.entry(1).status, d.entry(2).status]).toEqual(['merged', 'merged']);
      expect(d.monitor.violations).toEqual([]);
    });

    it('B: a PR removed while its batch merges never lands when the land turns out not to have happened', () => {
      const d = new QueueDriver({ maxBatch: 2, minBatch: 2 });
      d.send({ type: 'pause' });
      d.enqueue(1);
      d.enqueue(2);
      d.send({ type: 'resume' });
      d.complete();
      const [b] = d.live();
      d.report(b.id, 'success');
      const land = d.take('land');
      d.send({ type: 'remove', entryId: 'e1' });
      landUnknownThenNotLanded(d, b.id, land.id);
      expect(d.batch(b.id).status).toBe('withdrawn');
      expect(d.entry(1).status).toBe('removed');
      landAll(d);
      expect(d.entry(1).status).toBe('removed');
      expect(d.entry(2).status).toBe('merged');
      const lands = d.issued.filter((o) => o.kind === 'land');
      expect(lands.filter((o) => o.batchId === b.id)).toHaveLength(1);
      expect(lands.some((o) => o.kind === 'land' && o.prNumbers.includes(1) && o !== land)).toBe(false);
      expect(d.monitor.violations).toEqual([]);
    });

    it('B: a new head while the batch merges re-queues the PR with that head when the land did not happen', () => {
      const { d, land, batchId } = landing();
      d.send({ type: 'headUpdated', entryId: 'e1', headSha: 'h1b' });
      landUnknownThenNotLanded(d, batchId, land.id);
      expect(d.batch(batchId).status).toBe('withdrawn');
      expect(d.entry(1).headSha).toBe('h1b');
      expect(d.entry(1).batchId).not.toBe(batchId);
      const prepare = d.take('prepare');
      expect(prepare).toMatchObject({ heads: [{ entryId: 'e1', headSha: 'h1b' }] });
      expect(d.monitor.violations).toEqual([]);
    });

    it('C: an urgent PR enqueued while paused withdraws nothing until resume', () => {
      const d = new QueueDriver({ maxBatch: 1, minChainSuccess: 0 });
      d.enqueue(1);
      d.enqueue(2);
      d.complete();
      const running = d.live().map((b) => b.id);
      d.send({ type: 'pause' });
      const ops = d.enqueue(9, 100);
      expect(ops).toEqual([]);
      expect(d.live().map((b) => b.id)).toEqual(running);
      expect(d.state.batches.some((b) => b.status === 'withdrawn')).toBe(false);
      d.send({ type: 'setPriority', entryId: 'e9', priority: 200 });
      expect(d.state.batches.some((b) => b.status === 'withdrawn')).toBe(false);
      const resumed = d.send({ type: 'resume' });
      expect(running.map((id) => d.batch(id).status)).toEqual(['withdrawn', 'withdrawn']);
      expect(resumed.filter((o) => o.kind === 'cleanup')).toHaveLength(2);
      expect(d.live()[0].prNumbers).toEqual([9]);
      expect(d.monitor.violations).toEqual([]);
    });

    /** Two PRs in one batch, paused while they are enqueued so that they share it. */
    function twoInOneBatch(): { d: QueueDriver; b: ReturnType<QueueDriver['batch']> } {
      const d = new QueueDriver({ maxBatch: 2, minBatch: 2 });
      d.send({ type: 'pause' });
      d.enqueue(1);
      d.enqueue(2);
      d.send({ type: 'resume' });
      const [b] = d.live();
      expect(b.prNumbers).toEqual([1, 2]);
      return { d, b };
    }

    function readBack(d: QueueDriver, facts: { candidateSha: string | null; candidateLanded: boolean; baseSha?: string }): void {
      const op = d.take('readBack');
      d.send({
        type: 'operationSucceeded',
        operationId: op.id,
        readBack: {
          baseSha: facts.baseSha ?? 'base0',
          candidateSha: facts.candidateSha,
          candidateLanded: facts.candidateLanded,
          published: facts.candidateSha !== null,
          ciStarted: facts.candidateSha !== null,
        },
      });
    }

    it('E: a PR set aside while its prepare is reconciling is not prepared again after the readBack', () => {
      const { d, b } = twoInOneBatch();
      const prepare = d.take('prepare');
      d.send({ type: 'operationUnknown', operationId: prepare.id });
      expect(d.batch(b.id).status).toBe('reconciling');
      d.send({ type: 'setAside', entryId: 'e1', setAside: true });
      expect(d.batch(b.id).status).toBe('reconciling');
      readBack(d, { candidateSha: null, candidateLanded: false });
      expect(d.batch(b.id).status).toBe('withdrawn');
      expect(d.entry(1)).toMatchObject({ status: 'queued', setAside: true, batchId: null });
      const prepares = d.pending.filter((o) => o.kind === 'prepare');
      expect(prepares.flatMap((o) => (o.kind === 'prepare' ? o.heads.map((h) => h.number) : []))).toEqual([2]);
      landAll(d);
      expect([d.entry(1).status, d.entry(2).status]).toEqual(['queued', 'merged']);
      expect(d.issued.some((o) => o.kind === 'land' && o.prNumbers.includes(1))).toBe(false);
      expect(d.monitor.violations).toEqual([]);
    });

    it('E: a PR set aside while its land is in flight is not landed again when the readBack shows no land', () => {
      const { d, b } = twoInOneBatch();
      d.complete();
      d.report(b.id, 'success');
      const land = d.take('land');
      d.send({ type: 'setAside', entryId: 'e1', setAside: true });
      // the land in flight may still happen: nothing is withdrawn yet
      expect(d.batch(b.id).status).toBe('merging');
      expect(d.entry(1).status).toBe('merging');
      d.send({ type: 'operationUnknown', operationId: land.id });
      readBack(d, { candidateSha: d.batch(b.id).candidateSha, candidateLanded: false });
      expect(d.batch(b.id).status).toBe('withdrawn');
      expect(d.entry(1)).toMatchObject({ status: 'queued', setAside: true, batchId: null });
      landAll(d);
      expect([d.entry(1).status, d.entry(2).status]).toEqual(['queued', 'merged']);
      const lands = d.issued.filter((o) => o.kind === 'land');
      expect(lands.filter((o) => o.kind === 'land' && o.prNumbers.includes(1))).toEqual([land]);
      expect(d.monitor.violations).toEqual([]);
    });

    it('E: a PR set aside while its land is in flight is merged when the land happened', () => {
      const { d, b } = twoInOneBatch();
      d.complete();
      d.report(b.id, 'success');
      const land = d.take('land');
      d.send({ type: 'setAside', entryId: 'e1', setAside: true });
      d.send({ type: 'operationUnknown', operationId: land.id });
      const candidate = d.batch(b.id).candidateSha;
      readBack(d, { candidateSha: candidate, candidateLanded: true, baseSha: candidate ?? '' });
      expect(d.batch(b.id).status).toBe('landed');
      expect([d.entry(1).status, d.entry(2).status]).toEqual(['merged', 'merged']);
      expect(d.monitor.violations).toEqual([]);
    });

    it('E: a PR set aside while its land is in flight is queued, still set aside, when the land is rejected', () => {
      const { d, b } = twoInOneBatch();
      d.complete();
      d.report(b.id, 'success');
      const land = d.take('land');
      d.send({ type: 'setAside', entryId: 'e1', setAside: true });
      d.send({ type: 'operationFailed', operationId: land.id, reason: 'base moved', baseSha: 'other' });
      expect(d.batch(b.id).status).toBe('withdrawn');
      expect(d.entry(1)).toMatchObject({ status: 'queued', setAside: true });
      expect(d.live().map((x) => x.prNumbers)).toEqual([[2]]);
      expect(d.monitor.violations).toEqual([]);
    });

    it('E: set aside and taken back while the land is in flight, the batch may land again', () => {
      const { d, b } = twoInOneBatch();
      d.complete();
      d.report(b.id, 'success');
      const land = d.take('land');
      d.send({ type: 'setAside', entryId: 'e1', setAside: true });
      d.send({ type: 'setAside', entryId: 'e1', setAside: false });
      d.send({ type: 'operationUnknown', operationId: land.id });
      readBack(d, { candidateSha: d.batch(b.id).candidateSha, candidateLanded: false });
      expect(d.batch(b.id).status).toBe('merging');
      expect(d.take('land')).toMatchObject({ batchId: b.id, prNumbers: [1, 2] });
      expect(d.monitor.violations).toEqual([]);
    });

    it('D: the invariant checker rejects a status change that skips a step of the table', () => {
      const d = new QueueDriver();
      d.send({ type: 'pause' });
      d.enqueue(1);
      const prev = d.state;
      const forged = {
        ...prev,
        revision: prev.revision + 1,
        entries: prev.entries.map((e) => ({ ...e, status: 'merged' as const })),
      };
      // nothing recorded: the jump is unexplained
      expect(checkStepInvariants(prev, forged, [], [])).toContain('entry e1 queued -> merged');
      // a recorded step that is not in the table
      const skip = [{ subject: 'entry' as const, id: 'e1', from: 'queued', to: 'merged' }];
      expect(checkStepInvariants(prev, forged, [], skip)).toContain('entry e1 recorded step queued -> merged while queued');
      // a chain of allowed single steps explains it
      const chain = [
        { subject: 'entry' as const, id: 'e1', from: 'queued', to: 'testing' },
        { subject: 'entry' as const, id: 'e1', from: 'testing', to: 'merging' },
        { subject: 'entry' as const, id: 'e1', from: 'merging', to: 'merged' },
      ];
      expect(checkStepInvariants(prev, forged, [], chain)).toEqual([]);
    });

    it('D: the reducer records each status step it takes within one event', () => {
      const d = new QueueDriver();
      d.enqueue(1);
      d.complete();
      const [b] = d.live();
      const result = reduceMergeQueue(d.state, {
        type: 'checkReported',
        at: 0,
        batchId: b.id,
        candidateSha: b.candidateSha ?? '',
        name: 'ci',
        state: 'success',
      });
      expect(result.transitions.filter((t) => t.id === b.id).map((t) => `${t.from}->${t.to}`)).toEqual(['testing->ready', 'ready->merging']);
      expect(checkStepInvariants(d.state, result.state, result.operations, result.transitions)).toEqual([]);
    });
  });
});

describe('holds: a queue that stops by itself, with the reason', () => {
  it('a land refused for good pauses the queue with the reason on the entry; the batch stays ready and lands once resumed', () => {
    const { d, land, batchId } = landing();
    const ops = d.send({ type: 'landRefused', operationId: land.id, reason: 'Protected branch update failed for refs/heads/main.' });
    expect(ops).toEqual([]);
    expect(d.state.status).toBe('paused');
    expect(d.state.hold).toMatchObject({ kind: 'landRefused', reason: 'Protected branch update failed for refs/heads/main.', entryIds: ['e1'] });
    expect(d.batch(batchId)).toMatchObject({ status: 'ready', operation: null });
    expect(d.entry(1)).toMatchObject({ status: 'testing', block: 'Landing refused by the provider: Protected branch update failed for refs/heads/main.' });
    // Nothing is tried again while the queue holds: ticks and new PRs plan nothing.
    d.now += 60_000;
    expect(d.send({ type: 'tick' })).toEqual([]);
    expect(d.enqueue(2)).toEqual([]);
    // Resume: the hold and its block are gone, and the land is issued again (once).
    const again = d.send({ type: 'resume' });
    expect(d.state.hold).toBeUndefined();
    expect(d.entry(1).block).toBeNull();
    expect(again.filter((o) => o.kind === 'land')).toEqual([expect.objectContaining({ batchId, candidateSha: d.batch(batchId).candidateSha })]);
    d.succeed(again.find((o) => o.kind === 'land')!);
    expect(d.entry(1).status).toBe('merged');
    expect(d.monitor.violations).toEqual([]);
  });

  it('a refused land whose PR was removed meanwhile withdraws the batch and applies the removal', () => {
    const { d, land, batchId } = landing();
    d.send({ type: 'remove', entryId: 'e1' });
    expect(d.entry(1).status).toBe('merging');
    d.send({ type: 'landRefused', operationId: land.id, reason: 'Resource not accessible by integration' });
    expect(d.batch(batchId).status).toBe('withdrawn');
    expect(d.entry(1).status).toBe('removed');
    expect(d.state.status).toBe('paused');
    expect(d.monitor.violations).toEqual([]);
  });

  it('a stale landRefused (not the batch’s current land) changes nothing', () => {
    const { d } = landing();
    const before = d.state;
    d.send({ type: 'landRefused', operationId: 'op999', reason: 'x' });
    expect(d.state).toBe(before);
  });

  it('quarantine pauses the queue with the reason on the entries of the failing operation; enable after disable clears it too', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    d.enqueue(2);
    const prepare = d.take('prepare');
    d.send({ type: 'quarantined', reason: '10 failures in a row; the last: unavailable: Service Unavailable', operationId: prepare.id });
    expect(d.state.status).toBe('paused');
    // The entries of the batch whose operation kept failing carry the reason; #2 waits outside it.
    expect(d.state.hold).toMatchObject({ kind: 'quarantined', entryIds: ['e1'] });
    expect(d.entry(1).block).toBe('Queue quarantined: 10 failures in a row; the last: unavailable: Service Unavailable');
    expect(d.entry(2).block).toBeNull();
    d.send({ type: 'disable' });
    expect(d.state.hold).toBeDefined();
    d.send({ type: 'enable' });
    expect(d.state.hold).toBeUndefined();
    expect([1, 2].map((n) => d.entry(n).block)).toEqual([null, null]);
    expect(d.state.status).toBe('active');
    expect(d.monitor.violations).toEqual([]);
  });

  it('a hold during a move leaves the queue paused once the move completes, until resumed', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    d.send({ type: 'migrate' });
    d.send({ type: 'quarantined', reason: 'failing' });
    expect(d.state.status).toBe('migrating');
    d.send({ type: 'migrated', baseSha: 'base1' });
    expect(d.state.status).toBe('paused');
    expect(d.state.hold?.kind).toBe('quarantined');
    d.send({ type: 'resume' });
    expect(d.state.status).toBe('active');
    expect(d.state.hold).toBeUndefined();
    expect(d.monitor.violations).toEqual([]);
  });

  it('an entry blocked by a conflict meanwhile keeps its own reason when the hold is cleared', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    const prepare = d.take('prepare');
    d.send({ type: 'quarantined', reason: 'failing', operationId: prepare.id });
    d.send({ type: 'operationFailed', operationId: prepare.id, reason: '#1 conflicts with the base', conflictEntryId: 'e1' });
    expect(d.entry(1).status).toBe('blocked');
    const block = d.entry(1).block;
    d.send({ type: 'resume' });
    expect(d.entry(1).block).toBe(block);
    expect(d.monitor.violations).toEqual([]);
  });
});
