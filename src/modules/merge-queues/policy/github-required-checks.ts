/*
 * The checks GitHub requires on a branch, as the queue requires them (`requiredChecksFrom:
 * branchProtection`). Pure: takes what GitHub answered (the branch's protection summary and the
 * rules that apply to the branch) and returns the required checks with where each came from and
 * the binding issue 38 gives them (queue-policy.ts). No I/O here.
 */
import type { CheckBinding } from './queue-policy';

/** `protection.required_status_checks` of GET /repos/{owner}/{repo}/branches/{branch} (null: the branch has none). */
export interface ProtectionStatusChecks {
  enforcement_level?: string;
  contexts?: readonly string[];
  checks?: readonly { context: string; app_id: number | null }[];
}

/** One rule of GET /repos/{owner}/{repo}/rules/branches/{branch} (GitHub's `repository-rule-detailed`). */
export interface BranchRule {
  type: string;
  ruleset_id?: number;
  ruleset_source?: string;
  ruleset_source_type?: string;
  parameters?: { required_status_checks?: readonly { context: string; integration_id?: number | null }[] } & Record<string, unknown>;
}

/** Where GitHub requires a check: the branch's protection rule, or a ruleset (its id, and the repository or organization it belongs to). */
export type CheckOrigin = { kind: 'branchProtection' } | { kind: 'ruleset'; rulesetId: number; rulesetSource?: string };

/** A check GitHub requires: its name, the GitHub App expected to send it (its id) when one is named, and every rule naming it. */
export interface GithubRequiredCheck {
  name: string;
  app?: string;
  from: CheckOrigin[];
}

/** The longest check name the queue takes (the settings' own limit). */
const CHECK_NAME = /^[\x21-\x7e][\x20-\x7e]{0,99}$/;

/**
 * The checks GitHub requires on the branch, in GitHub's order (the protection rule's first, then
 * each ruleset's), each name once:
 * - the protection rule counts unless its enforcement is `off`; `checks` carries each context with
 *   its app (`app_id`, null for any source), and legacy `contexts` names the rest (any source);
 * - a ruleset's `required_status_checks` rule names each context with its `integration_id` (absent:
 *   any source);
 * - an app id (a positive integer; GitHub writes -1 or null for "any") binds the check to that app;
 * - a name required by several rules keeps every origin; the first app named binds it (GitHub would
 *   want a run of each app, which no one check run is: the queue follows the first and says so in
 *   `from`).
 * Names the queue cannot hold (empty, over 100 characters, unprintable) are left out and listed in
 * `skipped`.
 */
export function requiredChecksFromGithub(
  protection: ProtectionStatusChecks | null,
  rules: readonly BranchRule[],
): { checks: GithubRequiredCheck[]; skipped: string[] } {
  const byName = new Map<string, GithubRequiredCheck>();
  const skipped: string[] = [];
  const add = (name: string, appId: number | null | undefined, origin: CheckOrigin) => {
    if (!CHECK_NAME.test(name)) {
      if (!skipped.includes(name)) skipped.push(name);
      return;
    }
    const app = typeof appId === 'number' && Number.isSafeInteger(appId) && appId > 0 ? String(appId) : undefined;
    const known = byName.get(name);
    if (!known) {
      byName.set(name, { name, ...(app !== undefined && { app }), from: [origin] });
      return;
    }
    if (known.app === undefined && app !== undefined) known.app = app;
    if (!known.from.some((o) => sameOrigin(o, origin))) known.from.push(origin);
  };
  if (protection && protection.enforcement_level !== 'off') {
    const origin: CheckOrigin = { kind: 'branchProtection' };
    for (const check of protection.checks ?? []) add(check.context, check.app_id, origin);
    for (const context of protection.contexts ?? []) add(context, null, origin);
  }
  for (const rule of rules) {
    if (rule.type !== 'required_status_checks' || typeof rule.ruleset_id !== 'number') continue;
    const origin: CheckOrigin = {
      kind: 'ruleset',
      rulesetId: rule.ruleset_id,
      ...(rule.ruleset_source !== undefined && { rulesetSource: rule.ruleset_source }),
    };
    for (const check of rule.parameters?.required_status_checks ?? []) add(check.context, check.integration_id, origin);
  }
  return { checks: [...byName.values()], skipped };
}

/**
 * The queue's required check names and their bindings (issue 38): a check with an app counts only
 * that app's check runs (`{source: checkRun, app}`); one without counts check runs of any app and
 * never commit statuses (GitHub would take a status too; the queue does not, since anyone with push
 * access can post one: bind the check by hand with `requiredChecksFrom: settings` for a CI that
 * reports statuses).
 */
export function bindingsFromGithub(checks: readonly GithubRequiredCheck[]): { names: string[]; checkSources: Record<string, CheckBinding> } {
  const checkSources: Record<string, CheckBinding> = {};
  for (const c of checks) if (c.app !== undefined) checkSources[c.name] = { source: 'checkRun', app: c.app };
  return { names: checks.map((c) => c.name), checkSources };
}

/** What the queue keeps of its last read of GitHub's required checks (`MergeQueue.requiredChecksRead`). */
export interface RequiredChecksRead {
  /** When GitHub last answered (ISO 8601); absent when it never has. */
  readAt?: string;
  /** The checks as GitHub last named them, with where each came from. */
  checks: GithubRequiredCheck[];
  /** The last read that failed, when it is newer than the last answer: when and why (the checks above are kept). */
  failed?: { at: string; reason: string };
}

/** The stored document, or null when the queue never read GitHub's checks (or it is unreadable). */
export function requiredChecksReadOf(stored: unknown): RequiredChecksRead | null {
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return null;
  const doc = stored as Record<string, unknown>;
  const checks: GithubRequiredCheck[] = [];
  for (const c of Array.isArray(doc.checks) ? doc.checks : []) {
    const check = c as { name?: unknown; app?: unknown; from?: unknown };
    if (typeof check.name !== 'string') continue;
    const from = (Array.isArray(check.from) ? check.from : []).filter(
      (o): o is CheckOrigin =>
        (o as CheckOrigin)?.kind === 'branchProtection' ||
        ((o as CheckOrigin)?.kind === 'ruleset' && typeof (o as { rulesetId?: unknown }).rulesetId === 'number'),
    );
    checks.push({ name: check.name, ...(typeof check.app === 'string' && { app: check.app }), from });
  }
  const failed = doc.failed as { at?: unknown; reason?: unknown } | undefined;
  return {
    ...(typeof doc.readAt === 'string' && { readAt: doc.readAt }),
    checks,
    ...(typeof failed?.at === 'string' && typeof failed.reason === 'string' && { failed: { at: failed.at, reason: failed.reason } }),
  };
}

function sameOrigin(a: CheckOrigin, b: CheckOrigin): boolean {
  return a.kind === b.kind && (a.kind === 'branchProtection' || a.rulesetId === (b as { rulesetId: number }).rulesetId);
}
