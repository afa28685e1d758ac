import { QueueDriver } from '@test/support/merge-queue-driver';

/*
 * The planner's part of a push to a queued PR (a provider `synchronize`, issue 38): a removal with
 * its reason, or a new head, that withdraws a land no executor has started, and defers as before
 * when one has. And results that do not count: the check stays pending and its timeout says why.
 */

const PUSHED = 'new commits were pushed';

/** One PR whose candidate passed CI: its land is issued, not yet started. */
function landing(d = new QueueDriver({ screening: false })) {
  d.enqueue(1);
  d.complete();
  const [b] = d.live();
  d.report(b.id, 'success');
  const land = d.take('land');
  expect(d.batch(b.id)).toMatchObject({ status: 'merging', operation: { kind: 'land', outcome: 'pending' } });
  return { d, batchId: b.id, land };
}

describe('a push to a queued PR', () => {
  it('remove with a reason: the entry ends removed with the reason in its block, its batch withdrawn, nothing lands', () => {
    const d = new QueueDriver({ screening: false });
    d.enqueue(1);
    d.complete();
    const [b] = d.live();
    expect(b.status).toBe('testing');
    d.send({ type: 'remove', entryId: 'e1', reason: PUSHED, headSha: 'h1b', stopLand: true });
    // It leaves with the pushed head (the PR's status is posted there) and the reason.
    expect(d.entry(1)).toMatchObject({ status: 'removed', block: PUSHED, headSha: 'h1b', batchId: null });
    expect(d.batch(b.id).status).toBe('withdrawn');
    d.report(b.id, 'success');
    d.complete();
    expect(d.issued.filter((o) => o.kind === 'land')).toEqual([]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('a land not yet started is withdrawn: the executor would find it superseded, and the PR leaves with the reason', () => {
    const { d, batchId, land } = landing();
    d.send({ type: 'remove', entryId: 'e1', reason: PUSHED, stopLand: true });
    expect(d.batch(batchId)).toMatchObject({ status: 'withdrawn', operation: null });
    expect(d.entry(1)).toMatchObject({ status: 'removed', block: PUSHED });
    // The executor's claim (operationStarted) is for an operation the state no longer awaits: nothing happens.
    const before = d.state;
    d.send({ type: 'operationStarted', operationId: land.id });
    expect(d.state).toBe(before);
    expect(d.issued.filter((o) => o.kind === 'land')).toEqual([land]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('without stopLand (an API removal) a land not yet started is awaited as before', () => {
    const { d, batchId } = landing();
    d.send({ type: 'remove', entryId: 'e1' });
    expect(d.batch(batchId).status).toBe('merging');
    expect(d.entry(1)).toMatchObject({ status: 'merging', pendingRemoval: true });
  });

  it('a land already started is the provider’s to finish: if it lands the PR is merged (no block), if not it is removed with the reason', () => {
    for (const landed of [true, false]) {
      const { d, batchId, land } = landing();
      d.send({ type: 'operationStarted', operationId: land.id });
      d.send({ type: 'remove', entryId: 'e1', reason: PUSHED, headSha: 'h1b', stopLand: true });
      expect(d.batch(batchId).status).toBe('merging');
      expect(d.entry(1)).toMatchObject({ status: 'merging', pendingRemoval: true, removal: { reason: PUSHED, headSha: 'h1b' }, block: null, headSha: 'h1' });
      if (landed) {
        d.send({ type: 'operationSucceeded', operationId: land.id });
        expect(d.entry(1)).toMatchObject({ status: 'merged', block: null, pendingRemoval: false, headSha: 'h1' });
        expect(d.entry(1).removal).toBeUndefined();
      } else {
        d.send({ type: 'operationFailed', operationId: land.id, reason: 'the base moved to base9', baseSha: 'base9' });
        expect(d.entry(1)).toMatchObject({ status: 'removed', block: PUSHED, headSha: 'h1b' });
      }
      expect(d.monitor.violations).toEqual([]);
    }
  });

  it('a new head with stopLand re-queues the PR at once when its land had not started, and tests the new head', () => {
    const { d, batchId } = landing();
    d.send({ type: 'headUpdated', entryId: 'e1', headSha: 'h1b', stopLand: true });
    expect(d.batch(batchId).status).toBe('withdrawn');
    const e = d.entry(1);
    expect(e).toMatchObject({ headSha: 'h1b', pendingHeadSha: null });
    expect(['queued', 'testing']).toContain(e.status);
    const prepare = d.pending.find((o) => o.kind === 'prepare');
    expect(prepare).toMatchObject({ heads: [{ entryId: 'e1', headSha: 'h1b' }] });
    expect(d.monitor.violations).toEqual([]);
  });
});

describe('results that do not count', () => {
  it('leave the check pending; the timeout fails it naming why (skipped on the candidate)', () => {
    const d = new QueueDriver({ screening: false, checkTimeoutMs: 60_000 });
    d.enqueue(1);
    d.complete();
    const [b] = d.live();
    const revision = d.state.revision;
    d.send({ type: 'checkReported', batchId: b.id, candidateSha: 'cand1', name: 'ci', state: 'pending', notCounted: 'skipped on the candidate' });
    // Noted (one revision), the check still pending, nothing lands.
    expect(d.state.revision).toBe(revision + 1);
    expect(d.batch(b.id)).toMatchObject({ status: 'testing', checks: [{ name: 'ci', state: 'pending' }] });
    expect(d.batch(b.id).notCounted).toEqual([{ sha: 'cand1', name: 'ci', why: 'skipped on the candidate' }]);
    // The same note again changes nothing.
    const noted = d.state;
    d.send({ type: 'checkReported', batchId: b.id, candidateSha: 'cand1', name: 'ci', state: 'pending', notCounted: 'skipped on the candidate' });
    expect(d.state).toBe(noted);
    d.now = 60_000;
    d.send({ type: 'tick' });
    expect(d.batch(b.id).failureReason).toBe('check ci did not count within 1 min: skipped on the candidate');
    expect(d.issued.filter((o) => o.kind === 'land')).toEqual([]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('a real result after a note counts as usual; a note for another commit or an unrequired check is dropped', () => {
    const d = new QueueDriver({ screening: false });
    d.enqueue(1);
    d.complete();
    const [b] = d.live();
    const before = d.state;
    d.send({ type: 'checkReported', batchId: b.id, candidateSha: 'other', name: 'ci', state: 'pending', notCounted: 'x' });
    d.send({ type: 'checkReported', batchId: b.id, candidateSha: 'cand1', name: 'lint', state: 'pending', notCounted: 'x' });
    expect(d.state).toBe(before);
    d.send({ type: 'checkReported', batchId: b.id, candidateSha: 'cand1', name: 'ci', state: 'pending', notCounted: 'reported by a commit status' });
    d.report(b.id, 'success');
    expect(d.take('land')).toMatchObject({ batchId: b.id });
    expect(d.monitor.violations).toEqual([]);
  });

  it('without a note the timeout reason is the usual one', () => {
    const d = new QueueDriver({ screening: false, checkTimeoutMs: 60_000 });
    d.enqueue(1);
    d.complete();
    const [b] = d.live();
    d.now = 60_000;
    d.send({ type: 'tick' });
    expect(d.batch(b.id).failureReason).toBe('check ci did not report within 1 min');
  });
});
