/**
 * What GitHub requires to update a branch: branch protection rules (their required status checks)
 * and repository rulesets (their `required_status_checks` rules), served as GitHub's REST API
 * describes them, and changed by tests, which sends the `branch_protection_rule` and
 * `repository_ruleset` webhooks GitHub sends:
 * - GET /repos/{owner}/{repo}/branches/{branch}: the branch with `protected` and
 *   `protection.required_status_checks` (`checks` with their `app_id`, legacy `contexts`), readable
 *   by anyone who can see the repository (as on GitHub, unlike the admin-only protection route);
 * - GET /repos/{owner}/{repo}/rules/branches/{branch}: the rules of every active ruleset whose
 *   conditions include the branch, each with `ruleset_id`, `ruleset_source` and its source type.
 */
import { BareRepository } from './bare-git';
import { GithubJson } from './github-json';
import { fail, iso, paginate, type Route, type RouteContext, send } from './http';
import { GitLinks } from './rest-repos';
import type { EmulatedDelivery, EmulatedRepository, EmulatorState } from './state';
import type { Webhooks } from './webhooks';

/** A required check of a protection rule: its context and the GitHub App expected to send it (none: any source). */
export interface ProtectionCheck {
  context: string;
  appId?: number;
}

/** A ruleset's required check: its context and the GitHub App (`integration_id`) expected to send it. */
export interface RulesetCheck {
  context: string;
  integrationId?: number;
}

export interface EmulatedRuleset {
  id: number;
  name: string;
  /** `refs/heads/<name>` patterns (`*` matches within a path segment), `~DEFAULT_BRANCH` or `~ALL`. */
  include: string[];
  enforcement: 'active' | 'evaluate' | 'disabled';
  checks: RulesetCheck[];
  createdAt: string;
  updatedAt: string;
}

interface EmulatedProtection {
  id: number;
  checks: ProtectionCheck[];
  createdAt: string;
  updatedAt: string;
}

export class BranchRules {
  readonly routes: Route[] = [
    { method: 'GET', path: /^\/repos\/([^/]+)\/([^/]+)\/rules\/branches\/(.+)$/, auth: 'user', handle: (ctx, m) => this.rulesForBranch(ctx, m) },
    { method: 'GET', path: /^\/repos\/([^/]+)\/([^/]+)\/branches\/(.+)$/, auth: 'user', handle: (ctx, m) => this.branch(ctx, m) },
  ];

  /** Protection rules by repository id, then branch name. */
  private readonly protections = new Map<number, Map<string, EmulatedProtection>>();
  /** Rulesets by repository id. */
  private readonly rulesets = new Map<number, EmulatedRuleset[]>();
  private readonly json: GithubJson;

  constructor(
    private readonly state: EmulatorState,
    private readonly webhooks: Webhooks,
  ) {
    this.json = new GithubJson(state);
  }

  /**
   * Sets the protection rule of `branch` (its name as the rule's pattern) to require `checks`, and
   * sends `branch_protection_rule` created or edited when a webhook is configured.
   */
  async setProtection(repository: string, branch: string, checks: ProtectionCheck[]): Promise<EmulatedDelivery | undefined> {
    const repo = this.repo(repository);
    const rules = this.protections.get(repo.id) ?? new Map<string, EmulatedProtection>();
    this.protections.set(repo.id, rules);
    const now = iso(Date.now());
    const known = rules.get(branch);
    const rule = { id: known?.id ?? this.state.nextId(), checks: checks.map((c) => ({ ...c })), createdAt: known?.createdAt ?? now, updatedAt: now };
    rules.set(branch, rule);
    return this.protectionEvent(repo, branch, rule, known ? 'edited' : 'created');
  }

  /** Deletes the protection rule of `branch`, and sends `branch_protection_rule` deleted. */
  async removeProtection(repository: string, branch: string): Promise<EmulatedDelivery | undefined> {
    const repo = this.repo(repository);
    const rule = this.protections.get(repo.id)?.get(branch);
    if (!rule) throw new Error(`no protection rule on ${repository}:${branch}`);
    this.protections.get(repo.id)?.delete(branch);
    return this.protectionEvent(repo, branch, { ...rule, updatedAt: iso(Date.now()) }, 'deleted');
  }

  /**
   * Creates a repository ruleset (no `id`) or replaces the one with `id`, and sends
   * `repository_ruleset` created or edited. Returns the ruleset and the delivery.
   */
  async setRuleset(
    repository: string,
    ruleset: { id?: number; name: string; include: string[]; checks: RulesetCheck[]; enforcement?: EmulatedRuleset['enforcement'] },
  ): Promise<{ ruleset: EmulatedRuleset; delivery?: EmulatedDelivery }> {
    const repo = this.repo(repository);
    const list = this.rulesets.get(repo.id) ?? [];
    this.rulesets.set(repo.id, list);
    const now = iso(Date.now());
    const known = ruleset.id !== undefined ? list.find((r) => r.id === ruleset.id) : undefined;
    if (ruleset.id !== undefined && !known) throw new Error(`no ruleset ${ruleset.id} on ${repository}`);
    const next: EmulatedRuleset = {
      id: known?.id ?? this.state.nextId(),
      name: ruleset.name,
      include: [...ruleset.include],
      enforcement: ruleset.enforcement ?? 'active',
      checks: ruleset.checks.map((c) => ({ ...c })),
      createdAt: known?.createdAt ?? now,
      updatedAt: now,
    };
    if (known) list.splice(list.indexOf(known), 1, next);
    else list.push(next);
    return { ruleset: next, delivery: await this.rulesetEvent(repo, next, known ? 'edited' : 'created') };
  }

  /** Deletes a repository ruleset, and sends `repository_ruleset` deleted. */
  async deleteRuleset(repository: string, id: number): Promise<EmulatedDelivery | undefined> {
    const repo = this.repo(repository);
    const list = this.rulesets.get(repo.id) ?? [];
    const known = list.find((r) => r.id === id);
    if (!known) throw new Error(`no ruleset ${id} on ${repository}`);
    list.splice(list.indexOf(known), 1);
    return this.rulesetEvent(repo, { ...known, updatedAt: iso(Date.now()) }, 'deleted');
  }

  /** GET /repos/{owner}/{repo}/branches/{branch} (`branch-with-protection`). */
  private async branch({ login, res }: RouteContext, match: RegExpMatchArray): Promise<void> {
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    const branch = decodeURIComponent(match[3]);
    const git = new BareRepository(repo.path);
    const sha = await git.resolveRef(`refs/heads/${branch}`).catch(() => null);
    const info = sha ? await git.commit(sha).catch(() => null) : null;
    if (!sha || !info) return fail(res, 404, 'Branch not found');
    const links = new GitLinks(this.state.url, repo);
    const rule = this.protections.get(repo.id)?.get(branch);
    const checks = rule?.checks ?? [];
    const rulesetApplies = this.activeRulesets(repo, branch).length > 0;
    return send(res, 200, {
      name: branch,
      commit: links.repoCommit(info),
      _links: { html: `${links.html}/tree/${branch}`, self: `${links.api}/branches/${branch}` },
      protected: rule !== undefined || rulesetApplies,
      protection: {
        enabled: rule !== undefined,
        required_status_checks: {
          enforcement_level: rule ? 'non_admins' : 'off',
          contexts: checks.map((c) => c.context),
          checks: checks.map((c) => ({ context: c.context, app_id: c.appId ?? null })),
        },
      },
      protection_url: `${links.api}/branches/${branch}/protection`,
    });
  }

  /** GET /repos/{owner}/{repo}/rules/branches/{branch}: every rule of the active rulesets that apply, paginated. */
  private rulesForBranch({ login, url, res }: RouteContext, match: RegExpMatchArray): void {
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    const branch = decodeURIComponent(match[3]);
    const rules = this.activeRulesets(repo, branch).flatMap((r) => [
      {
        type: 'required_status_checks',
        parameters: { strict_required_status_checks_policy: false, required_status_checks: r.checks.map(rulesetCheckJson) },
        ruleset_source_type: 'Repository',
        ruleset_source: `${repo.owner}/${repo.name}`,
        ruleset_id: r.id,
      },
    ]);
    return send(res, 200, paginate(rules, url, res));
  }

  private activeRulesets(repo: EmulatedRepository, branch: string): EmulatedRuleset[] {
    return (this.rulesets.get(repo.id) ?? []).filter((r) => r.enforcement === 'active' && r.include.some((p) => refMatches(p, branch, repo.defaultBranch)));
  }

  private async protectionEvent(
    repo: EmulatedRepository,
    branch: string,
    rule: EmulatedProtection,
    action: 'created' | 'edited' | 'deleted',
  ): Promise<EmulatedDelivery | undefined> {
    if (!this.state.webhook) return undefined;
    const contexts = rule.checks.map((c) => c.context);
    const off = 'off';
    return this.webhooks.deliver('branch_protection_rule', {
      action,
      rule: {
        id: rule.id,
        repository_id: repo.id,
        name: branch,
        created_at: rule.createdAt,
        updated_at: rule.updatedAt,
        pull_request_reviews_enforcement_level: off,
        required_approving_review_count: 0,
        dismiss_stale_reviews_on_push: false,
        require_code_owner_review: false,
        authorized_dismissal_actors_only: false,
        ignore_approvals_from_contributors: false,
        required_status_checks: contexts,
        required_status_checks_enforcement_level: contexts.length > 0 ? 'non_admins' : off,
        strict_required_status_checks_policy: false,
        signature_requirement_enforcement_level: off,
        linear_history_requirement_enforcement_level: off,
        lock_branch_enforcement_level: off,
        admin_enforced: false,
        allow_force_pushes_enforcement_level: off,
        allow_deletions_enforcement_level: off,
        merge_queue_enforcement_level: off,
        required_deployments_enforcement_level: off,
        required_conversation_resolution_level: off,
        authorized_actors_only: false,
        authorized_actor_names: [],
      },
      ...(action === 'edited' && { changes: { required_status_checks: { from: [] } } }),
      repository: this.json.repository(repo),
      sender: this.json.user(repo.owner),
    });
  }

  private async rulesetEvent(
    repo: EmulatedRepository,
    ruleset: EmulatedRuleset,
    action: 'created' | 'edited' | 'deleted',
  ): Promise<EmulatedDelivery | undefined> {
    if (!this.state.webhook) return undefined;
    const api = `${this.state.url}/repos/${repo.owner}/${repo.name}`;
    return this.webhooks.deliver('repository_ruleset', {
      action,
      repository_ruleset: {
        id: ruleset.id,
        name: ruleset.name,
        target: 'branch',
        source_type: 'Repository',
        source: `${repo.owner}/${repo.name}`,
        enforcement: ruleset.enforcement,
        bypass_actors: [],
        node_id: Buffer.from(`RepositoryRuleset:${ruleset.id}`).toString('base64'),
        _links: { self: { href: `${api}/rulesets/${ruleset.id}` }, html: { href: `${this.state.url}/${repo.owner}/${repo.name}/rules/${ruleset.id}` } },
        conditions: { ref_name: { include: ruleset.include, exclude: [] } },
        rules: [
          {
            type: 'required_status_checks',
            parameters: { strict_required_status_checks_policy: false, required_status_checks: ruleset.checks.map(rulesetCheckJson) },
          },
        ],
        created_at: ruleset.createdAt,
        updated_at: ruleset.updatedAt,
      },
      repository: this.json.repository(repo),
      sender: this.json.user(repo.owner),
    });
  }

  private repo(repository: string): EmulatedRepository {
    const repo = this.state.repos.get(repository.toLowerCase());
    if (!repo) throw new Error(`no repository ${repository}`);
    return repo;
  }
}

function rulesetCheckJson(c: RulesetCheck): { context: string; integration_id?: number } {
  return { context: c.context, ...(c.integrationId !== undefined && { integration_id: c.integrationId }) };
}

/** A ruleset's ref condition against a branch: `~ALL`, `~DEFAULT_BRANCH`, or `refs/heads/<pattern>` where `*` matches within a segment. */
function refMatches(pattern: string, branch: string, defaultBranch: string): boolean {
  if (pattern === '~ALL') return true;
  if (pattern === '~DEFAULT_BRANCH') return branch === defaultBranch;
  const regex = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
  return regex.test(`refs/heads/${branch}`);
}
