import type { AppConfig } from '@/common/config/app-config';
import { compilePathGroups, lanesFor, type PathGroup } from '../planner';
import { INLINE_MATCH_STEPS, PathMatching } from './path-matching';

const matching = (deadlineMs: number, threads = 1) =>
  new PathMatching({ mergeQueues: { pathMatchDeadlineMs: deadlineMs, pathMatchThreads: threads } } as AppConfig);

const GROUPS: PathGroup[] = [
  { name: 'api', paths: ['services/api/', '**/*.proto'] },
  { name: 'web', paths: ['apps/web/**'] },
];
/** Patterns whose DFA grows with every character (a star then many `?`): the slowest shape the limits allow. */
const HEAVY: PathGroup[] = Array.from({ length: 16 }, (_, g) => ({
  name: `g${g}`,
  paths: Array.from({ length: 50 }, (_, p) => `**/*${String.fromCharCode(97 + (p % 26))}${'?'.repeat(150)}/**/x${g}`),
}));
/**
 * Each path is in group g0 (so no path ends the match early by being outside every group) and each
 * is a different string of a and b (so no path reuses the automaton states another built): every
 * path costs seconds, the whole PR minutes, never under the deadline however fast the machine.
 */
let seed = 41;
const letter = () => (((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) >> 16) % 2 ? 'a' : 'b');
const heavyPaths = Array.from({ length: 300 }, (_, i) => `${Array.from({ length: 510 }, letter).join('')}/${i}/x0`);

describe('PathMatching: lanes off the event loop, with a deadline', () => {
  let subject: PathMatching;
  afterEach(() => subject?.onModuleDestroy());

  it('matches a small PR on the calling thread and a large one on a worker thread, with the same answer as the planner', async () => {
    subject = matching(60_000);
    expect(await subject.lanes(GROUPS, ['services/api/a.ts', 'x/y.proto'])).toEqual({ lanes: ['api'], reason: null });
    // Past the inline bound: on a thread.
    const many = Array.from({ length: 2_000 }, (_, i) => (i % 2 ? `apps/web/src/page-${i}.tsx` : `services/api/routes/r-${i}.ts`));
    expect(many.join('').length * 10).toBeGreaterThan(INLINE_MATCH_STEPS);
    expect(await subject.lanes(GROUPS, many)).toEqual(lanesFor(compilePathGroups(GROUPS), many));
    expect(await subject.lanes(GROUPS, [...many, 'package.json'])).toEqual({ lanes: ['api', 'web'], reason: { kind: 'outside', path: 'package.json' } });
  }, 60_000);

  it('past its deadline the PR is in every lane with the reason, and the thread serves the next PR', async () => {
    subject = matching(1_000);
    const started = Date.now();
    const verdict = await subject.lanes(HEAVY, heavyPaths);
    const took = Date.now() - started;
    expect(verdict).toEqual({ lanes: HEAVY.map((g) => g.name), reason: { kind: 'deadline', ms: 1_000 } });
    // Answered at the deadline (plus the thread's start), not after the whole match (minutes).
    expect(took).toBeGreaterThanOrEqual(1_000);
    expect(took).toBeLessThan(15_000);
    // The same thread, stopped at its deadline, answers the next PR in time.
    expect(
      await subject.lanes(
        GROUPS,
        Array.from({ length: 3_000 }, () => 'apps/web/x.ts'),
      ),
    ).toEqual({ lanes: ['web'], reason: null });
  }, 60_000);

  it('a path over the limits or paths not known are every lane without matching', async () => {
    subject = matching(60_000);
    expect((await subject.lanes(GROUPS, ['a'.repeat(1_025)])).reason).toMatchObject({ kind: 'tooLong', length: 1_025 });
    expect(await subject.lanes(GROUPS, null)).toEqual({ lanes: ['api', 'web'], reason: { kind: 'unlisted' } });
    expect(await subject.lanes([], ['x'])).toEqual({ lanes: [], reason: null });
  });
});
