import { QueueDriver } from '@test/support/merge-queue-driver';
import { knownLanes, lanesHeadOf } from './entry-lanes';
import { MAX_PATH_GROUPS, type PathGroup } from './lanes';

const GROUPS: PathGroup[] = [
  { name: 'api', paths: ['services/api/'] },
  { name: 'web', paths: ['apps/web/'] },
  { name: 'docs', paths: ['docs/'] },
];

/** A paused queue with the path groups (nothing is planned: the entries stay queued), holding PR 1 (head h1) and PR 2 (head h2). */
function pausedWithGroups(groups: PathGroup[] = GROUPS): QueueDriver {
  const d = new QueueDriver({ pathGroups: groups });
  d.send({ type: 'pause' });
  d.enqueue(1);
  d.enqueue(2);
  return d;
}

describe('entry lanes in the planner state (entryLanes)', () => {
  it("the current head's lanes are kept, in the groups' order, once each; only the lanes change", () => {
    const d = pausedWithGroups();
    const before = d.state;
    expect(d.entry(1).lanes).toBeUndefined();
    const ops = d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: ['docs', 'api', 'docs'] });
    expect(ops).toEqual([]);
    expect(d.entry(1).lanes).toEqual(['api', 'docs']);
    expect(d.state.revision).toBe(before.revision + 1);
    expect(d.state.entries.map(({ lanes: _lanes, ...e }) => e)).toEqual(before.entries);
    expect(d.entry(2).lanes).toBeUndefined();
    // The same lanes again change nothing (no revision); other lanes replace them; none is an answer too.
    const same = d.state;
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: ['api', 'docs'] });
    expect(d.state).toBe(same);
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: [] });
    expect(d.entry(1).lanes).toEqual([]);
    expect(d.monitor.violations).toEqual([]);
  });

  it('a stale answer changes nothing: an older head, a lane of no current group, no groups, an unknown or final entry', () => {
    const d = pausedWithGroups();
    const before = d.state;
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h0', lanes: ['api'] });
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: ['api', 'mobile'] });
    d.send({ type: 'entryLanes', entryId: 'nope', headSha: 'h1', lanes: ['api'] });
    expect(d.state).toBe(before);
    d.send({ type: 'remove', entryId: 'e2' });
    const removed = d.state;
    d.send({ type: 'entryLanes', entryId: 'e2', headSha: 'h2', lanes: ['web'] });
    expect(d.state).toBe(removed);
    const without = new QueueDriver();
    without.send({ type: 'pause' });
    without.enqueue(1);
    const plain = without.state;
    without.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: [] });
    expect(without.state).toBe(plain);
  });

  it("a new head drops the old head's lanes; the new head's answer sets them, a late answer for the old one does not", () => {
    const d = pausedWithGroups();
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: ['api'] });
    d.send({ type: 'entryLanes', entryId: 'e2', headSha: 'h2', lanes: ['web'] });
    d.send({ type: 'headUpdated', entryId: 'e1', headSha: 'h1b' });
    expect(d.entry(1).lanes).toBeUndefined();
    expect(d.entry(2).lanes).toEqual(['web']);
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: ['api'] });
    expect(d.entry(1).lanes).toBeUndefined();
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1b', lanes: ['web', 'docs'] });
    expect(d.entry(1).lanes).toEqual(['web', 'docs']);
    // The same head again (nothing new to test) keeps them.
    d.send({ type: 'headUpdated', entryId: 'e1', headSha: 'h1b' });
    expect(d.entry(1).lanes).toEqual(['web', 'docs']);
  });

  it('a removal that leaves with the pushed head drops the lanes', () => {
    const d = pausedWithGroups();
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: ['api'] });
    d.send({ type: 'remove', entryId: 'e1', reason: 'new commits were pushed', headSha: 'h1b' });
    expect(d.entry(1)).toMatchObject({ status: 'removed', headSha: 'h1b' });
    expect(d.entry(1).lanes).toBeUndefined();
  });

  it('a head pushed while the land is in flight: its lanes are those of the pending head, kept when it applies', () => {
    const d = new QueueDriver({ pathGroups: GROUPS });
    d.enqueue(1);
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: ['api'] });
    d.complete();
    const [b] = d.live();
    d.report(b.id, 'success');
    const land = d.take('land');
    d.send({ type: 'operationStarted', operationId: land.id });
    expect(d.entry(1).status).toBe('merging');
    d.send({ type: 'headUpdated', entryId: 'e1', headSha: 'h1b' });
    expect(d.entry(1)).toMatchObject({ headSha: 'h1', pendingHeadSha: 'h1b' });
    expect(lanesHeadOf(d.entry(1))).toBe('h1b');
    // The pushed head is the one to be tested next: the old head's lanes go, the pushed head's are taken.
    expect(d.entry(1).lanes).toBeUndefined();
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: ['api'] });
    expect(d.entry(1).lanes).toBeUndefined();
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1b', lanes: ['docs'] });
    expect(d.entry(1).lanes).toEqual(['docs']);
    // The land did not happen: the pending head becomes the head (tested again at once), with its lanes.
    d.send({ type: 'operationFailed', operationId: land.id, reason: 'merge conflict' });
    expect(d.entry(1)).toMatchObject({ headSha: 'h1b', pendingHeadSha: null, lanes: ['docs'] });
    expect(d.entry(1).status).not.toBe('merged');
    expect(d.monitor.violations).toEqual([]);
  });

  it('changed path groups drop every lane (matched under the old ones); a setting that is not the groups keeps them', () => {
    const d = pausedWithGroups();
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: ['api'] });
    d.send({ type: 'entryLanes', entryId: 'e2', headSha: 'h2', lanes: ['web'] });
    d.send({ type: 'configure', config: { maxBatch: 3 } });
    expect([d.entry(1).lanes, d.entry(2).lanes]).toEqual([['api'], ['web']]);
    // The same names with other patterns are other groups.
    d.send({ type: 'configure', config: { pathGroups: [{ ...GROUPS[0], paths: ['api/'] }, GROUPS[1], GROUPS[2]] } });
    expect([d.entry(1).lanes, d.entry(2).lanes]).toEqual([undefined, undefined]);
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: ['api'] });
    d.send({ type: 'configure', config: { pathGroups: [] } });
    expect(d.entry(1).lanes).toBeUndefined();
    // Without groups no answer is taken.
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: [] });
    expect(d.entry(1).lanes).toBeUndefined();
  });

  it('keeps at most MAX_PATH_GROUPS lanes (no more groups can exist)', () => {
    const many = Array.from({ length: MAX_PATH_GROUPS }, (_, i) => ({ name: `g${i}`, paths: [`g${i}/`] }));
    const d = pausedWithGroups(many);
    d.send({ type: 'entryLanes', entryId: 'e1', headSha: 'h1', lanes: [...many.map((g) => g.name), ...many.map((g) => g.name)] });
    expect(d.entry(1).lanes).toEqual(many.map((g) => g.name));
  });

  it('takes the lanes of known paths only: matched, or a path in no group (every lane); not listed in full, over the limits or past the deadline is not known', () => {
    expect(knownLanes({ lanes: ['api'], reason: null })).toEqual(['api']);
    expect(knownLanes({ lanes: [], reason: null })).toEqual([]);
    expect(knownLanes({ lanes: ['api', 'web'], reason: { kind: 'outside', path: 'package.json' } })).toEqual(['api', 'web']);
    expect(knownLanes({ lanes: ['api', 'web'], reason: { kind: 'unlisted' } })).toBeNull();
    expect(knownLanes({ lanes: ['api', 'web'], reason: { kind: 'tooLong', path: 'x', length: 2_000 } })).toBeNull();
    expect(knownLanes({ lanes: ['api', 'web'], reason: { kind: 'tooDeep', path: 'x', depth: 200 } })).toBeNull();
    expect(knownLanes({ lanes: ['api', 'web'], reason: { kind: 'deadline', ms: 2_000 } })).toBeNull();
  });
});
