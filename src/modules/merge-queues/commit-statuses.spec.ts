import { QueueDriver } from '@test/support/merge-queue-driver';
import { DESCRIPTION_MAX, ETA_STEP_MS, SHOWN_POSITIONS, statusChanges } from './commit-statuses';

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
    expect(changes(d, () => d.enqueue(1))).toEqual([expect.stringMatching(/^h1 pending: Queued: position 1(,|$)/)]);
    // A second arrival moves nobody ahead of #1: only its own status is posted.
    expect(changes(d, () => d.enqueue(2))).toEqual([expect.stringMatching(/^h2 pending: Queued: position 2(,|$)/)]);
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

  it('names the position only at the front of the line, so a change posts a bounded number of statuses whatever its length', () => {
    const d = new QueueDriver();
    d.send({ type: 'pause' });
    const total = SHOWN_POSITIONS + 30;
    for (let n = 1; n <= total; n++) d.enqueue(n);
    const shown = statusChanges({ ...d.state, entries: [] }, d.state, d.now).map((s) => `${s.sha} ${s.description}`);
    expect(shown).toHaveLength(total);
    expect(shown[0]).toMatch(/^h1 Queued: position 1, merge expected by \d\d:\d\d UTC$/);
    expect(shown[SHOWN_POSITIONS - 1]).toMatch(new RegExp(`^h${SHOWN_POSITIONS} Queued: position ${SHOWN_POSITIONS},`));
    expect(shown.slice(SHOWN_POSITIONS)).toEqual(
      Array.from({ length: 30 }, (_, i) => `h${SHOWN_POSITIONS + 1 + i} Queued: ${SHOWN_POSITIONS} or more PRs ahead`),
    );
    // An arrival at the back posts its own status only.
    expect(changes(d, () => d.enqueue(total + 1))).toEqual([`h${total + 1} pending: Queued: ${SHOWN_POSITIONS} or more PRs ahead`]);
    // The head leaving moves everyone up: the front is re-posted, and the one PR that reached it.
    const moved = changes(d, () => d.send({ type: 'remove', entryId: 'e1' }));
    expect(moved).toHaveLength(1 + SHOWN_POSITIONS);
    expect(moved[0]).toBe('h1 error: Removed from the merge queue');
    expect(moved[1]).toMatch(/^h2 pending: Queued: position 1,/);
    expect(moved[SHOWN_POSITIONS]).toMatch(new RegExp(`^h${SHOWN_POSITIONS + 1} pending: Queued: position ${SHOWN_POSITIONS},`));
    // A PR moved to the front by priority shows it; the one it pushed out of the front says so.
    const reprioritised = changes(d, () => d.send({ type: 'setPriority', entryId: `e${total}`, priority: 1 }));
    expect(reprioritised).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^h${total} pending: Queued: position 1,`)),
        `h${SHOWN_POSITIONS + 1} pending: Queued: ${SHOWN_POSITIONS} or more PRs ahead`,
      ]),
    );
    expect(reprioritised).toHaveLength(1 + SHOWN_POSITIONS);
  });

  it('counts PRs in batches first, then the waiting by priority; a blocked PR holds no place; the ETA is rounded up to the quarter hour', () => {
    const d = new QueueDriver({ maxParallel: 1, maxBatch: 2, minBatch: 2 });
    d.send({ type: 'pause' });
    d.enqueue(1);
    d.enqueue(2);
    d.send({ type: 'resume' });
    d.complete();
    expect(d.live().map((b) => [b.status, b.prNumbers])).toEqual([['testing', [1, 2]]]);
    d.send({ type: 'pause' });
    d.enqueue(3);
    d.enqueue(4, 1);
    const blocked = {
      ...d.state,
      entries: d.state.entries.map((e) => (e.number === 3 ? { ...e, status: 'blocked' as const, block: 'a person must look' } : e)),
    };
    const shown = (state: typeof d.state) =>
      statusChanges({ ...state, entries: [] }, state, d.now)
        .filter((s) => s.description.startsWith('Queued'))
        .map((s) => `${s.sha} ${s.description}`);
    // #4 outranks #3 among the waiting, never the PRs already in a batch.
    expect(shown(d.state).map((x) => x.replace(/, merge.*$/, ''))).toEqual(['h3 Queued: position 4', 'h4 Queued: position 3']);
    expect(shown(blocked).map((x) => x.replace(/, merge.*$/, ''))).toEqual(['h4 Queued: position 3']);
    for (const line of shown(d.state)) {
      const [, hh, mm] = /by (\d\d):(\d\d) UTC$/.exec(line) ?? [];
      expect((Number(hh) * 60 + Number(mm)) % (ETA_STEP_MS / 60_000)).toBe(0);
    }
  });
});
