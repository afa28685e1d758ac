import { QueueDriver } from '@test/support/merge-queue-driver';
import { MAX_CHECK_FAILURES } from './index';

/** One PR whose candidate `cand1` is testing (publish and startCi answered). */
function testing(config = {}): { d: QueueDriver; batchId: string } {
  const d = new QueueDriver(config);
  d.enqueue(1);
  d.complete(['prepare', 'publish', 'startCi']);
  const [b] = d.live();
  expect(b).toMatchObject({ status: 'testing', candidateSha: 'cand1' });
  return { d, batchId: b.id };
}

const fail = (d: QueueDriver, batchId: string, failures: { test: string; target?: string; file?: string; kind?: string }[], extra = {}) =>
  d.send({ type: 'checkReported', batchId, candidateSha: 'cand1', name: 'ci', state: 'failure', failures, ...extra });

describe('failing tests named by a check result', () => {
  it('a failing result on the candidate keeps its failing tests on the batch, each with its check, once per test', () => {
    const { d, batchId } = testing();
    fail(d, batchId, [
      { test: 'api > login', file: 'test/login.spec.ts', kind: 'failure' },
      { test: 'api > login', file: 'elsewhere.ts' },
      { test: 'db > migrate', target: '//db:test', kind: 'error' },
      { test: '' },
    ]);
    const b = d.batch(batchId);
    expect(b.status).toBe('failed');
    expect(b.failures).toEqual([
      { check: 'ci', test: 'api > login', file: 'test/login.spec.ts', kind: 'failure' },
      { check: 'ci', test: 'db > migrate', target: '//db:test', kind: 'error' },
    ]);
    expect(b.failuresTruncated).toBeUndefined();
    expect(d.monitor.violations).toEqual([]);
  });

  it('keeps at most MAX_CHECK_FAILURES per result and says more were named', () => {
    const { d, batchId } = testing();
    fail(
      d,
      batchId,
      Array.from({ length: MAX_CHECK_FAILURES + 7 }, (_, i) => ({ test: `t${i}` })),
    );
    const b = d.batch(batchId);
    expect(b.failures).toHaveLength(MAX_CHECK_FAILURES);
    expect(b.failures?.at(-1)).toEqual({ check: 'ci', test: `t${MAX_CHECK_FAILURES - 1}` });
    expect(b.failuresTruncated).toBe(true);
  });

  it('a result that says CI found more than it sent is flagged truncated', () => {
    const { d, batchId } = testing();
    fail(d, batchId, [{ test: 'a' }], { failuresTruncated: true });
    expect(d.batch(batchId)).toMatchObject({ failures: [{ check: 'ci', test: 'a' }], failuresTruncated: true });
  });

  it('a result for another commit, a passing result and a pass/fail-only failure keep no failing tests', () => {
    const { d, batchId } = testing({ requiredChecks: ['ci', 'lint'] });
    const before = d.state;
    d.send({ type: 'checkReported', batchId, candidateSha: 'other', name: 'ci', state: 'failure', failures: [{ test: 'x' }] });
    expect(d.state).toBe(before);
    d.send({ type: 'checkReported', batchId, candidateSha: 'cand1', name: 'lint', state: 'success', failures: [{ test: 'ignored' }] });
    expect(d.batch(batchId).failures).toBeUndefined();
    d.report(batchId, 'failure');
    const b = d.batch(batchId);
    expect(b).toMatchObject({ status: 'failed', failureReason: 'check ci failed' });
    expect(b.failures).toBeUndefined();
    expect(b.failuresTruncated).toBeUndefined();
  });

  it('a result for a check that already has its result, or for a final batch, adds nothing', () => {
    const { d, batchId } = testing({ requiredChecks: ['ci', 'lint'] });
    fail(d, batchId, [{ test: 'first' }]);
    const failed = d.state;
    expect(d.batch(batchId).status).toBe('failed');
    fail(d, batchId, [{ test: 'second' }]);
    d.send({ type: 'checkReported', batchId, candidateSha: 'cand1', name: 'lint', state: 'failure', failures: [{ test: 'lint rule' }] });
    expect(d.state).toBe(failed);
    expect(d.batch(batchId).failures).toEqual([{ check: 'ci', test: 'first' }]);
  });

  it('a withdrawn batch keeps nothing CI reports afterwards', () => {
    const { d, batchId } = testing();
    d.send({ type: 'remove', entryId: 'e1' });
    expect(d.batch(batchId).status).toBe('withdrawn');
    const before = d.state;
    fail(d, batchId, [{ test: 'late' }]);
    expect(d.state).toBe(before);
  });

  it('failing tests of a result that arrived early are kept with it and land on the batch when it tests that commit', () => {
    const d = new QueueDriver();
    d.enqueue(1);
    d.complete(['prepare']);
    const [b] = d.live();
    expect(b.status).toBe('preparing');
    fail(d, b.id, [{ test: 'early', kind: 'failure' }], { failuresTruncated: true });
    expect(d.batch(b.id).earlyChecks).toEqual([
      { sha: 'cand1', name: 'ci', state: 'failure', failures: [{ test: 'early', kind: 'failure' }], failuresTruncated: true },
    ]);
    d.complete(['publish']);
    expect(d.batch(b.id)).toMatchObject({ failures: [{ check: 'ci', test: 'early', kind: 'failure' }], failuresTruncated: true });
    expect(d.batch(b.id).earlyChecks).toBeUndefined();
    expect(d.monitor.violations).toEqual([]);
  });

  it('never changes the state it was given (the failing tests are new lists)', () => {
    const { d, batchId } = testing();
    const before = d.batch(batchId);
    const snapshot = JSON.stringify(d.state);
    const held = d.state;
    fail(d, batchId, [{ test: 'style' }, { test: 'style' }]);
    expect(JSON.stringify(held)).toBe(snapshot);
    expect(before.failures).toBeUndefined();
    expect(d.batch(batchId).failures).toEqual([{ check: 'ci', test: 'style' }]);
  });
});
