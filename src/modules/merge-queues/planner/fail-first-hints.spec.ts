import { newBatchState } from './batch-state';
import { batchHints, failFirstText } from './fail-first-hints';
import { MAX_FAIL_FIRST_TESTS } from './fail-first';
import type { BatchState, CheckFailure, EntryState } from './types';

function entry(id: string, number: number, suspectedFor?: CheckFailure[]): EntryState {
  return {
    id,
    number,
    headSha: `h${number}`,
    url: `https://example.test/pr/${number}`,
    title: null,
    status: 'testing',
    priority: 0,
    setAside: false,
    position: number,
    batchId: null,
    block: null,
    enqueuedAt: 0,
    failuresAlone: 0,
    suspectGroup: suspectedFor ? 'g1' : null,
    cleared: false,
    pendingHeadSha: null,
    pendingRemoval: false,
    heavyProbability: null,
    ...(suspectedFor && { suspectedFor }),
  };
}

function batch(id: string, entryIds: string[], extra: Partial<BatchState> = {}): BatchState {
  const built = { status: 'testing' as const, candidateSha: `c-${id}`, published: true };
  return newBatchState({ id, position: 0, entryIds, prNumbers: [], role: 'chain', parentId: null, baseSha: 'base' }, { ...built, ...extra });
}

const unitA = { check: 'ci', test: 'a.spec > adds' };
const unitB = { check: 'ci', test: 'b.spec > bakes', file: 'b.spec.ts' };
const lint = { check: 'lint', test: 'a.spec > adds' };

describe('fail-first hints (batchHints)', () => {
  it('names the suspects a probe holds with their failures, and hints their tests in merge order, each once', () => {
    const entries = [entry('e1', 1, [unitA, unitB]), entry('e2', 2), entry('e3', 3, [unitB, lint])];
    const part = batch('b2', ['e1', 'e2', 'e3'], { role: 'part' });
    const hints = batchHints(part, [], entries);
    expect(hints.holds).toEqual(['e1', 'e2', 'e3']);
    expect(hints.suspects).toEqual([
      { entryId: 'e1', number: 1, batchId: 'b2', failures: [unitA, unitB] },
      { entryId: 'e3', number: 3, batchId: 'b2', failures: [unitB, lint] },
    ]);
    // unitB twice (same check and test) is hinted once; lint names the same test on another check: kept.
    expect(hints.failFirst).toEqual([unitA, unitB, lint]);
  });

  it('counts the suspects of the batches a candidate is built on (its CI runs their changes too), not those of others', () => {
    const entries = [entry('e1', 1, [unitA]), entry('e2', 2), entry('e3', 3, [unitB]), entry('e4', 4, [lint])];
    const parent = batch('b1', ['e1']);
    const child = batch('b2', ['e2'], { parentId: 'b1' });
    const other = batch('b3', ['e3']);
    const hints = batchHints(child, [parent, other], entries);
    expect(hints.holds).toEqual(['e1', 'e2']);
    expect(hints.suspects).toEqual([{ entryId: 'e1', number: 1, batchId: 'b1', failures: [unitA] }]);
    expect(hints.failFirst).toEqual([unitA]);
  });

  it('follows what the running CI holds (ciContentIds) once CI started, and nothing for a candidate without suspects', () => {
    const entries = [entry('e1', 1, [unitA]), entry('e2', 2, [unitB])];
    const started = batch('b2', ['e2'], { parentId: 'b1', ciContentIds: ['e2'] });
    expect(batchHints(started, [batch('b1', ['e1'])], entries).failFirst).toEqual([unitB]);
    const clean = batchHints(batch('b4', ['e5']), [], [...entries, entry('e5', 5)]);
    expect(clean).toEqual({ holds: ['e5'], suspects: [], failFirst: [] });
  });

  it('leaves out entries the planner no longer holds, and bounds the hints', () => {
    const many = Array.from({ length: MAX_FAIL_FIRST_TESTS + 10 }, (_, i) => ({ check: 'ci', test: `t${i}` }));
    const hints = batchHints(batch('b1', ['gone', 'e1']), [], [entry('e1', 1, many)]);
    expect(hints.holds).toEqual(['gone', 'e1']);
    expect(hints.suspects.map((s) => s.entryId)).toEqual(['e1']);
    expect(hints.failFirst).toHaveLength(MAX_FAIL_FIRST_TESTS);
  });

  it('is not fooled by a parent loop', () => {
    const a = batch('b1', ['e1'], { parentId: 'b2' });
    const b = batch('b2', ['e2'], { parentId: 'b1' });
    expect(batchHints(b, [a, b], [entry('e1', 1, [unitA])]).failFirst).toEqual([unitA]);
  });
});

describe('fail-first hints as text (failFirstText)', () => {
  it('writes one test name a line, each once, line breaks in names made spaces', () => {
    expect(failFirstText([unitA, unitB, lint, { test: 'multi\nline' }, { test: '  ' }])).toBe('a.spec > adds\nb.spec > bakes\nmulti line\n');
  });

  it('is empty when there is nothing to run first', () => {
    expect(failFirstText([])).toBe('');
  });
});
