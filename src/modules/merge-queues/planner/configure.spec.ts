import { QueueDriver } from '@test/support/merge-queue-driver';
import { landing } from '@test/support/merge-queue-builders';

describe('configure (PATCH /merge-queues/{id} settings)', () => {
  it('changes bounds and timeouts for what is planned next, without touching batches in flight', () => {
    const d = new QueueDriver({ maxParallel: 1, maxBatch: 4 });
    for (const n of [1, 2, 3]) d.enqueue(n);
    d.complete();
    const [before] = d.live();
    const revision = d.state.revision;
    d.send({ type: 'configure', config: { maxParallel: 3, maxBatch: 8, checkTimeoutMs: 60_000, flakyRetries: 2 } });
    expect(d.state.revision).toBe(revision + 1);
    expect(d.state.config).toMatchObject({ maxParallel: 3, maxBatch: 8, checkTimeoutMs: 60_000, flakyRetries: 2, requiredChecks: ['ci'] });
    expect(d.batch(before.id).status).toBe('testing');
    expect(d.monitor.violations).toEqual([]);
  });

  it('withdraws every batch not yet landing when the required checks change, and plans their PRs again against the new checks', () => {
    const d = new QueueDriver({ maxParallel: 2 });
    for (const n of [1, 2]) d.enqueue(n);
    d.complete();
    const old = d.live().map((b) => b.id);
    expect(old.length).toBeGreaterThan(0);
    d.send({ type: 'configure', config: { requiredChecks: ['ci', 'lint'] } });
    for (const id of old) expect(d.batch(id).status).toBe('withdrawn');
    d.complete();
    const fresh = d.live();
    expect(fresh.length).toBeGreaterThan(0);
    for (const b of fresh) expect(b.checks.map((c) => c.name).sort()).toEqual(['ci', 'lint']);
    // One check is not enough any more.
    const head = fresh.find((b) => b.parentId === null)!;
    d.report(head.id, 'success', 'ci');
    expect(d.batch(head.id).status).toBe('testing');
    d.report(head.id, 'success', 'lint');
    expect(d.pending.some((o) => o.kind === 'land' && o.batchId === head.id)).toBe(true);
    expect(d.monitor.violations).toEqual([]);
  });

  it('lets a land in flight finish: it was tested against the checks required when it was issued', () => {
    const { d, land, batchId } = landing();
    d.send({ type: 'operationStarted', operationId: land.id });
    d.send({ type: 'configure', config: { requiredChecks: ['lint'] } });
    expect(d.batch(batchId).status).toBe('merging');
    d.send({ type: 'operationSucceeded', operationId: land.id });
    expect(d.batch(batchId).status).toBe('landed');
    expect(d.entry(1).status).toBe('merged');
    expect(d.monitor.violations).toEqual([]);
  });

  it('changes nothing (same state, no revision) for settings equal to the current ones or impossible ones', () => {
    const d = new QueueDriver({ maxBatch: 4 });
    const state = d.state;
    d.send({ type: 'configure', config: { maxBatch: 4, requiredChecks: ['ci'] } });
    expect(d.state).toBe(state);
    d.send({ type: 'configure', config: { minBatch: 5 } });
    d.send({ type: 'configure', config: { requiredChecks: [] } });
    expect(d.state).toBe(state);
  });
});

describe('moving the base (migrate, migrated)', () => {
  it('leaves a queue that was paused before the move paused after it: nobody resumed it', () => {
    const d = new QueueDriver();
    d.send({ type: 'pause' });
    d.send({ type: 'migrate' });
    expect(d.state.status).toBe('migrating');
    d.send({ type: 'migrated', baseSha: 'base1' });
    expect(d.state.status).toBe('paused');
    expect(d.state.baseSha).toBe('base1');
    expect(d.state.pausedBeforeMigration).toBeUndefined();
    d.enqueue(1);
    expect(d.pending).toEqual([]);
    d.send({ type: 'resume' });
    expect(d.pending.map((o) => o.kind)).toEqual(['prepare']);
    expect(d.monitor.violations).toEqual([]);
  });

  it('plans again after the move of a queue that was planning, and forgets a pause once the queue is disabled', () => {
    const d = new QueueDriver();
    d.send({ type: 'migrate' });
    d.enqueue(1);
    expect(d.pending).toEqual([]);
    d.send({ type: 'migrated', baseSha: 'base1' });
    expect(d.state.status).toBe('active');
    expect(d.pending.map((o) => o.kind)).toEqual(['prepare']);

    const e = new QueueDriver();
    e.send({ type: 'pause' });
    e.send({ type: 'migrate' });
    e.send({ type: 'disable' });
    expect(e.state.pausedBeforeMigration).toBeUndefined();
    e.send({ type: 'enable' });
    expect(e.state.status).toBe('idle'); // planning again: nothing to do
    expect(e.monitor.violations).toEqual([]);
  });
});
