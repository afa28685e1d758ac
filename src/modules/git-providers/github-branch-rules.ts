import type { Octokit } from '@octokit/rest';
import { ProviderFailure } from './git-provider.port';
import { call } from './github.provider';

/** GitHub lists the rules of a branch by pages of at most 100; past this many pages the rest is not read. */
const MAX_RULE_PAGES = 10;

/** What GitHub says is required to update a branch, as it answered (the merge queue maps it: policy/github-required-checks.ts). */
export interface BranchRequirements {
  /** `protection.required_status_checks` of the branch; null when the branch has no protection rule requiring checks. */
  protection: { enforcement_level?: string; contexts: string[]; checks: { context: string; app_id: number | null }[] } | null;
  /** The active rules of every ruleset that applies to the branch (repository and organization rulesets). */
  rules: { type: string; ruleset_id?: number; ruleset_source?: string; ruleset_source_type?: string; parameters?: Record<string, unknown> }[];
}

/**
 * Reads a branch's required checks from GitHub with the integration's token:
 * - the branch protection rule through GET /repos/{owner}/{repo}/branches/{branch}, whose
 *   `protection.required_status_checks` carries the same `checks` (context and app) and `contexts`
 *   as the protection route. That route (GET .../branches/{branch}/protection) needs admin rights
 *   (an App: the Administration permission) and answers 404 to anyone else, the same 404 as "not
 *   protected": a queue would silently require nothing. The branch route needs read access only;
 * - the rulesets through GET /repos/{owner}/{repo}/rules/branches/{branch} (read access): every
 *   active rule of every ruleset that applies to the branch, each with its ruleset id and source.
 * A branch that does not exist is a `not_found` ProviderFailure; every other failure propagates as
 * ProviderFailure (the caller keeps its last known checks).
 */
export class GitHubBranchRules {
  private readonly repo: { owner: string; repo: string };

  constructor(
    private readonly api: Octokit,
    nameWithOwner: string,
  ) {
    const [owner, repo] = nameWithOwner.split('/');
    this.repo = { owner, repo };
  }

  async requirements(branch: string): Promise<BranchRequirements> {
    let protection: BranchRequirements['protection'] = null;
    try {
      const { data } = await call(() => this.api.rest.repos.getBranch({ ...this.repo, branch }));
      const checks = data.protected ? data.protection?.required_status_checks : undefined;
      if (checks)
        protection = {
          ...(checks.enforcement_level !== undefined && { enforcement_level: checks.enforcement_level }),
          contexts: checks.contexts ?? [],
          checks: (checks.checks ?? []).map((c) => ({ context: c.context, app_id: c.app_id ?? null })),
        };
    } catch (error) {
      if (error instanceof ProviderFailure && error.kind === 'not_found')
        throw new ProviderFailure('not_found', `GitHub has no branch ${branch} in ${this.repo.owner}/${this.repo.repo}`);
      throw error;
    }
    const rules: BranchRequirements['rules'] = [];
    for (let page = 1; page <= MAX_RULE_PAGES; page++) {
      const { data } = await call(() => this.api.rest.repos.getBranchRules({ ...this.repo, branch, per_page: 100, page }));
      rules.push(...(data as BranchRequirements['rules']));
      if (data.length < 100) break;
    }
    return { protection, rules };
  }
}
