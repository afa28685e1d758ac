import { QueueDriver } from '../../../test/support/merge-queue-driver';
import { DESCRIPTION_MAX, statusChanges } from './commit-statuses';

/** Runs `step` on the driver and returns the statuses it changed, as `sha state: description`. */
function changes(d: QueueDriver, step: () => void): string[] {
  const before = d.state;
  step();
  return statusChanges(before, d.state, d.now).map((s) => `${s.sha} ${s.state}: ${s.description}`);
}

describe(statusChanges.name, () => {
  it('walks a PR head through queued, testing, landing and merged, and its candidate through testing and landed', () => {
    const d = new QueueDriver();
    d.send({ type: 'pause' });
    expect(changes(d, () => d.enqueue(1))).toEqual([expect.stringMatching(/^h1 pending: Queued: position 1 of 1/)]);
    // A second arrival moves nobody ahead of #1, but #1's count of the queue changes.
    expect(changes(d, () => d.enqueue(2))).toEqual([
      expect.stringMatching(/^h1 pending: Queued: position 1 of 2/),
      expect.stringMatching(/^h2 pending: Queued: position 2 of 2/),
    ]);
    const testing = changes(d, () => {
      d.send({ type: 'resume' });
      d.complete();
    });
    expect(testing).toEqual(
      expect.arrayContaining([expect.stringMatching(/^h1 pending: Testing/), expect.stringMatching(/^cand\d+ pending: Merge queue candidate for #1/)]),
    );
    const landed = changes(d, () => {
      for (const b of d.live().filter((x) => x.status === 'testing')) d.report(b.id, 'success');
      d.complete(['land', 'cleanup']);
    });
    expect(landed).toEqual(expect.arrayContaining(['h1 success: Merged by the merge queue', expect.stringMatching(/^cand\d+ success: Landed #1/)]));
    // Nothing changed, nothing to post.
    expect(changes(d, () => d.send({ type: 'tick' }))).toEqual([]);
  });

  it('a failing candidate fails its PR with the reason; a removed PR says so', () => {
    const d = new QueueDriver({ flakyRetries: 0 });
    d.enqueue(3);
    d.complete();
    const failed = changes(d, () => {
      for (const b of d.live().filter((x) => x.status === 'testing')) d.report(b.id, 'failure');
      d.complete();
    });
    expect(failed).toEqual(expect.arrayContaining([expect.stringMatching(/^h3 failure: Failed: /)]));
    d.send({ type: 'pause' });
    d.enqueue(4);
    expect(changes(d, () => d.send({ type: 'remove', entryId: 'e4' }))).toEqual(['h4 error: Removed from the merge queue']);
  });

  it("a new head is a status on the new commit, and descriptions fit GitHub's 140 characters", () => {
    const d = new QueueDriver();
    d.send({ type: 'pause' });
    for (let n = 1; n <= 3; n++) d.enqueue(n);
    const moved = changes(d, () => d.send({ type: 'headUpdated', entryId: 'e2', headSha: 'h2b' }));
    expect(moved.some((s) => s.startsWith('h2b pending: Queued'))).toBe(true);
    const blocked = statusChanges(d.state, { ...d.state, entries: d.state.entries.map((e) => ({ ...e, status: 'blocked' as const, block: 'x'.repeat(500) })) });
    expect(blocked).toHaveLength(3);
    for (const s of blocked) expect(s.description.length).toBeLessThanOrEqual(DESCRIPTION_MAX);
  });
});
