import { bindingsFromGithub, requiredChecksFromGithub, requiredChecksReadOf } from './github-required-checks';
import { countCheck, DEFAULT_POLICY } from './queue-policy';

const rulesetRule = (rulesetId: number, checks: { context: string; integration_id?: number | null }[], source = 'octo/widgets') => ({
  type: 'required_status_checks',
  ruleset_id: rulesetId,
  ruleset_source: source,
  ruleset_source_type: 'Repository',
  parameters: { required_status_checks: checks, strict_required_status_checks_policy: false },
});

describe(requiredChecksFromGithub.name, () => {
  it('takes each protection check with its app, and legacy contexts as any source', () => {
    const { checks, skipped } = requiredChecksFromGithub(
      {
        enforcement_level: 'non_admins',
        contexts: ['build', 'lint', 'legacy'],
        checks: [
          { context: 'build', app_id: 15368 },
          { context: 'lint', app_id: null },
        ],
      },
      [],
    );
    expect(checks).toEqual([
      { name: 'build', app: '15368', from: [{ kind: 'branchProtection' }] },
      { name: 'lint', from: [{ kind: 'branchProtection' }] },
      { name: 'legacy', from: [{ kind: 'branchProtection' }] },
    ]);
    expect(skipped).toEqual([]);
  });

  it('takes the required_status_checks rules of rulesets with their integration, and ignores other rules', () => {
    const { checks } = requiredChecksFromGithub(null, [
      { type: 'pull_request', ruleset_id: 7, parameters: {} },
      rulesetRule(7, [{ context: 'e2e', integration_id: 42 }, { context: 'docs' }]),
      rulesetRule(9, [{ context: 'org-check', integration_id: -1 }], 'octo'),
    ]);
    expect(checks).toEqual([
      { name: 'e2e', app: '42', from: [{ kind: 'ruleset', rulesetId: 7, rulesetSource: 'octo/widgets' }] },
      { name: 'docs', from: [{ kind: 'ruleset', rulesetId: 7, rulesetSource: 'octo/widgets' }] },
      { name: 'org-check', from: [{ kind: 'ruleset', rulesetId: 9, rulesetSource: 'octo' }] },
    ]);
  });

  it('a name required by protection and a ruleset is one check with both origins; an app named by either binds it', () => {
    const { checks } = requiredChecksFromGithub({ contexts: ['ci'], checks: [{ context: 'ci', app_id: null }] }, [
      rulesetRule(3, [{ context: 'ci', integration_id: 15368 }]),
      rulesetRule(4, [{ context: 'ci', integration_id: 99 }]),
    ]);
    expect(checks).toEqual([
      {
        name: 'ci',
        app: '15368',
        from: [
          { kind: 'branchProtection' },
          { kind: 'ruleset', rulesetId: 3, rulesetSource: 'octo/widgets' },
          { kind: 'ruleset', rulesetId: 4, rulesetSource: 'octo/widgets' },
        ],
      },
    ]);
  });

  it('protection whose status checks are off requires nothing; nothing at all is an empty list', () => {
    expect(requiredChecksFromGithub({ enforcement_level: 'off', contexts: ['ci'], checks: [{ context: 'ci', app_id: 1 }] }, []).checks).toEqual([]);
    expect(requiredChecksFromGithub(null, []).checks).toEqual([]);
  });

  it('leaves out names the queue cannot hold and lists them', () => {
    const long = 'x'.repeat(101);
    const { checks, skipped } = requiredChecksFromGithub({ contexts: ['ok', long, ''], checks: [] }, []);
    expect(checks.map((c) => c.name)).toEqual(['ok']);
    expect(skipped).toEqual([long, '']);
  });
});

describe(bindingsFromGithub.name, () => {
  it('binds a check with an app to that app’s check runs, and leaves the others plain (check runs of any app, never statuses)', () => {
    const { names, checkSources } = bindingsFromGithub([
      { name: 'build', app: '15368', from: [{ kind: 'branchProtection' }] },
      { name: 'lint', from: [{ kind: 'branchProtection' }] },
    ]);
    expect(names).toEqual(['build', 'lint']);
    expect(checkSources).toEqual({ build: { source: 'checkRun', app: '15368' } });
    const policy = { ...DEFAULT_POLICY, checkSources };
    const actions = { kind: 'checkRun' as const, appId: '15368', appSlug: 'github-actions' };
    const other = { kind: 'checkRun' as const, appId: '7', appSlug: 'other' };
    expect(countCheck(policy, { name: 'build', state: 'success', source: actions }).counts).toBe(true);
    expect(countCheck(policy, { name: 'build', state: 'success', source: other }).counts).toBe(false);
    expect(countCheck(policy, { name: 'lint', state: 'success', source: other }).counts).toBe(true);
    expect(countCheck(policy, { name: 'lint', state: 'success', source: { kind: 'status' } }).counts).toBe(false);
  });
});

describe(requiredChecksReadOf.name, () => {
  it('reads back what was stored, and null for nothing', () => {
    const stored = {
      readAt: '2026-11-29T05:00:00.000Z',
      checks: [{ name: 'ci', app: '1', from: [{ kind: 'ruleset', rulesetId: 3 }, { kind: 'bogus' }] }],
      failed: { at: '2026-11-29T06:00:00.000Z', reason: 'GitHub is unavailable' },
    };
    expect(requiredChecksReadOf(stored)).toEqual({
      readAt: '2026-11-29T05:00:00.000Z',
      checks: [{ name: 'ci', app: '1', from: [{ kind: 'ruleset', rulesetId: 3 }] }],
      failed: { at: '2026-11-29T06:00:00.000Z', reason: 'GitHub is unavailable' },
    });
    expect(requiredChecksReadOf(null)).toBeNull();
    expect(requiredChecksReadOf([])).toBeNull();
  });
});
