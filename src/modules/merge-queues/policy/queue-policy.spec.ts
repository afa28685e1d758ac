import { bindingsOf, countCheck, DEFAULT_POLICY, policyOf, type QueuePolicy, requiredCheckSettings, storedPolicy } from './queue-policy';

const actions = { kind: 'checkRun' as const, appId: '15368', appSlug: 'github-actions' };
const other = { kind: 'checkRun' as const, appId: '999', appSlug: 'someone-else' };
const policy = (p: Partial<QueuePolicy> = {}): QueuePolicy => ({ ...DEFAULT_POLICY, ...p });

describe('countCheck: a check result counts only from its source', () => {
  it('a plain name counts check runs of any app, never a commit status nor a check suite', () => {
    expect(countCheck(policy(), { name: 'ci', state: 'success', source: actions })).toEqual({ counts: true, state: 'success' });
    expect(countCheck(policy(), { name: 'ci', state: 'failure', source: other })).toEqual({ counts: true, state: 'failure' });
    expect(countCheck(policy(), { name: 'ci', state: 'success', source: { kind: 'status' } })).toMatchObject({
      counts: false,
      why: expect.stringMatching(/commit status.*source: "status"/),
    });
    expect(countCheck(policy(), { name: 'ci', state: 'success', source: { kind: 'checkSuite', appSlug: 'github-actions' } })).toMatchObject({
      counts: false,
      why: expect.stringMatching(/check suite \(app github-actions\) names only its app/),
    });
  });

  it('{name, app} counts only check runs of that app, by id or slug (case-insensitive)', () => {
    for (const app of ['15368', 'github-actions', 'GitHub-Actions']) {
      const p = policy({ checkSources: { ci: { source: 'checkRun', app } } });
      expect(countCheck(p, { name: 'ci', state: 'success', source: actions })).toEqual({ counts: true, state: 'success' });
      expect(countCheck(p, { name: 'ci', state: 'success', source: other })).toMatchObject({ counts: false, why: expect.stringContaining('someone-else') });
      expect(countCheck(p, { name: 'ci', state: 'success', source: { kind: 'status' } }).counts).toBe(false);
    }
    // A numeric binding never matches a slug, nor a run whose payload names no app.
    const p = policy({ checkSources: { ci: { source: 'checkRun', app: '15368' } } });
    expect(countCheck(p, { name: 'ci', state: 'success', source: { kind: 'checkRun', appSlug: '15368' } }).counts).toBe(false);
    expect(countCheck(p, { name: 'ci', state: 'success', source: { kind: 'checkRun' } }).counts).toBe(false);
  });

  it('{name, source: "status"} counts only commit statuses', () => {
    const p = policy({ checkSources: { ci: { source: 'status' } } });
    expect(countCheck(p, { name: 'ci', state: 'failure', source: { kind: 'status' } })).toEqual({ counts: true, state: 'failure' });
    expect(countCheck(p, { name: 'ci', state: 'success', source: actions })).toMatchObject({ counts: false, why: expect.stringContaining('commit statuses') });
    // Another check of the same queue is not affected by the binding.
    expect(countCheck(p, { name: 'lint', state: 'success', source: { kind: 'status' } }).counts).toBe(false);
  });

  it('skipped or neutral is no pass unless skippedPasses; from a source that does not count it stays not counted', () => {
    expect(countCheck(policy(), { name: 'ci', state: 'success', skipped: true, source: actions })).toEqual({
      counts: false,
      why: expect.stringMatching(/^skipped on the candidate/),
    });
    expect(countCheck(policy({ skippedPasses: true }), { name: 'ci', state: 'success', skipped: true, source: actions })).toEqual({
      counts: true,
      state: 'success',
    });
    expect(countCheck(policy({ skippedPasses: true }), { name: 'ci', state: 'success', skipped: true, source: { kind: 'status' } }).counts).toBe(false);
  });
});

describe('the stored policy and the settings resource', () => {
  it('reads defaults from an empty or unreadable document, and stores only what differs', () => {
    expect(policyOf({})).toEqual(DEFAULT_POLICY);
    expect(policyOf(null)).toEqual(DEFAULT_POLICY);
    expect(policyOf({ onHeadPush: 'whatever', skippedPasses: 'yes', checkSources: { ci: { source: 'checkRun' }, x: 3 } })).toEqual(DEFAULT_POLICY);
    expect(policyOf({ mergeMethod: 'fast-forward', enqueueLabel: 'a\nb', commentCommands: 'no', requireApproval: 0, requiredChecksFrom: 'rules' })).toEqual(
      DEFAULT_POLICY,
    );
    const p: QueuePolicy = {
      ...DEFAULT_POLICY,
      onHeadPush: 'requeueIfApproved',
      skippedPasses: true,
      checkSources: { ci: { source: 'checkRun', app: 'ci-app' }, gone: { source: 'status' } },
      mergeMethod: 'squash',
      enqueueLabel: 'ready to merge',
      commentCommands: false,
      requireApproval: false,
      requiredChecksFrom: 'branchProtection',
    };
    const stored = storedPolicy(p, ['ci', 'lint']);
    expect(stored).toEqual({
      onHeadPush: 'requeueIfApproved',
      skippedPasses: true,
      checkSources: { ci: { source: 'checkRun', app: 'ci-app' } },
      mergeMethod: 'squash',
      enqueueLabel: 'ready to merge',
      commentCommands: false,
      requireApproval: false,
      requiredChecksFrom: 'branchProtection',
    });
    expect(policyOf(stored)).toEqual({ ...p, checkSources: { ci: { source: 'checkRun', app: 'ci-app' } } });
    expect(storedPolicy(DEFAULT_POLICY, ['ci'])).toEqual({});
  });

  it('shows each required check with its source, and takes them back', () => {
    const p = policy({ checkSources: { ci: { source: 'checkRun', app: 'ci-app' }, legacy: { source: 'status' } } });
    const shown = requiredCheckSettings(['ci', 'lint', 'legacy'], p);
    expect(shown).toEqual([
      { name: 'ci', source: 'checkRun', app: 'ci-app' },
      { name: 'lint', source: 'checkRun' },
      { name: 'legacy', source: 'status' },
    ]);
    expect(bindingsOf(shown)).toEqual({ names: ['ci', 'lint', 'legacy'], checkSources: p.checkSources });
    expect(() => bindingsOf([{ name: 'ci', source: 'status', app: 'x' }])).toThrow(/requiredChecks\.0\.app/);
    expect(() =>
      bindingsOf([
        { name: 'ci', source: 'checkRun' },
        { name: 'ci', source: 'status' },
      ]),
    ).toThrow(/requiredChecks\.1\.name/);
  });
});
