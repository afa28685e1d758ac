import { QueueDriver } from '@test/support/merge-queue-driver';
import { checkReportFit, MAX_EARLY_CHECKS } from './index';

/** One PR whose candidate `cand1` is built; the publish is issued but not answered. */
function prepared(d = new QueueDriver()): { d: QueueDriver; batchId: string } {
  d.enqueue(1);
  d.complete(['prepare']);
  const [b] = d.live();
  expect(b).toMatchObject({ status: 'preparing', candidateSha: 'cand1', operation: { kind: 'publish' } });
  return { d, batchId: b.id };
}

describe('check results bound to the candidate', () => {
  it('a result for another commit than the candidate changes nothing (same state object, no revision)', () => {
    const { d, batchId } = prepared();
    d.complete(['publish', 'startCi']);
    expect(d.batch(batchId).status).toBe('testing');
    const before = d.state;
    expect(checkReportFit(d.batch(batchId), 'other')).toBe('other');
    expect(d.report(batchId, 'success', 'ci', 'other')).toEqual([]);
    expect(d.state).toBe(before);
    expect(d.report(batchId, 'failure', 'ci', 'other')).toEqual([]);
    expect(d.state).toBe(before);
    expect(checkReportFit(d.batch(batchId), 'cand1')).toBe('current');
    d.report(batchId, 'success');
    expect(d.take('land')).toMatchObject({ batchId, candidateSha: 'cand1' });
    expect(d.monitor.violations).toEqual([]);
  });

  it('a result that arrives while the batch is preparing is kept and applied once the batch tests that commit', () => {
    const { d, batchId } = prepared();
    expect(checkReportFit(d.batch(batchId), 'cand1')).toBe('early');
    const revision = d.state.revision;
    d.report(batchId, 'success');
    expect(d.state.revision).toBe(revision + 1);
    expect(d.batch(batchId)).toMatchObject({ status: 'preparing', earlyChecks: [{ sha: 'cand1', name: 'ci', state: 'success' }] });
    // A second result for the same commit and check does not replace the first (as on a candidate).
    const kept = d.state;
    d.report(batchId, 'failure');
    expect(d.state).toBe(kept);
    // Publish answered: the batch starts testing; the kept result passes it at once, startCi still outstanding.
    d.complete(['publish']);
    const b = d.batch(batchId);
    expect(b).toMatchObject({ status: 'ready', checks: [{ name: 'ci', state: 'success' }], operation: { kind: 'startCi' } });
    expect(b.earlyChecks).toBeUndefined();
    // The startCi outcome follows and the next planning pass lands the batch.
    d.complete(['startCi']);
    expect(d.take('land')).toMatchObject({ batchId, candidateSha: 'cand1' });
    expect(d.monitor.violations).toEqual([]);
  });

  it('an early failure fails the candidate once it is testing, with nobody else blamed', () => {
    const { d, batchId } = prepared();
    d.report(batchId, 'failure');
    d.complete(['publish']);
    expect(d.batch(batchId)).toMatchObject({ status: 'testing', checks: [{ name: 'ci', state: 'failure' }], failureReason: 'check ci failed' });
    d.complete(['startCi']);
    expect(d.batch(batchId).status).toBe('failed');
    expect(d.monitor.violations).toEqual([]);
  });

  it('keeps results for any commit while the candidate is unknown, and drops those for another commit when it starts testing', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    const [b] = d.live();
    expect(b.candidateSha).toBeNull();
    expect(checkReportFit(b, 'cand1')).toBe('early');
    d.report(b.id, 'failure', 'ci', 'stale');
    d.report(b.id, 'success', 'ci', 'cand1');
    d.report(b.id, 'pending', 'ci', 'cand1');
    expect(d.batch(b.id).earlyChecks).toEqual([
      { sha: 'stale', name: 'ci', state: 'failure' },
      { sha: 'cand1', name: 'ci', state: 'success' },
    ]);
    d.complete(['prepare']);
    expect(checkReportFit(d.batch(b.id), 'stale')).toBe('other');
    d.complete(['publish']);
    expect(d.batch(b.id)).toMatchObject({ status: 'ready', checks: [{ name: 'ci', state: 'success' }] });
    expect(d.monitor.violations).toEqual([]);
  });

  it('keeps at most MAX_EARLY_CHECKS results per batch, the newest', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    const [b] = d.live();
    for (let i = 0; i < MAX_EARLY_CHECKS + 5; i++) d.report(b.id, 'success', 'ci', `sha${i}`);
    const kept = d.batch(b.id).earlyChecks ?? [];
    expect(kept).toHaveLength(MAX_EARLY_CHECKS);
    expect(kept[0].sha).toBe('sha5');
  });

  it('does not change the state it was given (early results are replaced, never pushed in place)', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    const batchId = d.live()[0].id;
    d.report(batchId, 'success', 'ci', 'x1');
    const snapshot = JSON.stringify(d.state);
    const before = d.state;
    d.report(batchId, 'success', 'ci', 'x2');
    expect(JSON.stringify(before)).toBe(snapshot);
    expect(d.batch(batchId).earlyChecks).toHaveLength(2);
  });

  it('a final batch: its candidate is current (changes nothing), any other commit is other', () => {
    const { d, batchId } = prepared();
    d.complete(['publish', 'startCi']);
    d.report(batchId, 'success');
    d.succeed(d.take('land'));
    const b = d.batch(batchId);
    expect(b.status).toBe('landed');
    expect(checkReportFit(b, 'cand1')).toBe('current');
    expect(checkReportFit(b, 'cand2')).toBe('other');
    const before = d.state;
    d.report(batchId, 'failure');
    expect(d.state).toBe(before);
  });
});
