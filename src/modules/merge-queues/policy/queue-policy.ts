/*
 * A queue's own settings beyond the planner's tunables (GET/PATCH /merge-queues/{id}/settings),
 * stored in `MergeQueue.policy`, and the pure rules that read them: which check results count on a
 * GitHub queue (countCheck), and what a push to a queued PR does (onHeadPush). No I/O here.
 */

export const HEAD_PUSH_POLICIES = ['remove', 'requeueIfApproved'] as const;
export type HeadPushPolicy = (typeof HEAD_PUSH_POLICIES)[number];

export const MERGE_METHODS = ['merge', 'squash', 'rebase'] as const;
export type MergeMethod = (typeof MERGE_METHODS)[number];

/** Where the queue's required checks come from: its own settings, or the base branch's protection rules and rulesets on GitHub. */
export const REQUIRED_CHECKS_FROM = ['settings', 'branchProtection'] as const;
export type RequiredChecksFrom = (typeof REQUIRED_CHECKS_FROM)[number];

/** A GitHub label name: 1-50 characters, no control characters (GitHub's own limit is 50). */
export const LABEL_NAME = /^[^\x00-\x1f\x7f]{1,50}$/;

export const CHECK_SOURCE_KINDS = ['checkRun', 'status'] as const;
export type CheckSourceKind = (typeof CHECK_SOURCE_KINDS)[number];

/**
 * Where a required check must come from: check runs of any app (the default, stored as nothing),
 * check runs of one GitHub App (`app`: its id or slug), or commit statuses (the weaker choice:
 * anyone with push access can post one).
 */
export type CheckBinding = { source: 'checkRun'; app?: string } | { source: 'status' };

export interface QueuePolicy {
  onHeadPush: HeadPushPolicy;
  skippedPasses: boolean;
  /** By required check name; a name without an entry counts check runs of any app. */
  checkSources: Record<string, CheckBinding>;
  /** How a batch lands: a merge commit (today's default), one squashed commit per PR, or the PR's commits replayed. */
  mergeMethod: MergeMethod;
  /** A label that enqueues a PR on GitHub (removing it dequeues); null: labels do nothing. */
  enqueueLabel: string | null;
  /** `/queue` and `/dequeue` comments on a PR of a GitHub queue. */
  commentCommands: boolean;
  /** A PR enqueued from GitHub (label or comment) must have an APPROVED review decision. */
  requireApproval: boolean;
  /** Where the required checks come from. */
  requiredChecksFrom: RequiredChecksFrom;
}

export const DEFAULT_POLICY: QueuePolicy = {
  onHeadPush: 'remove',
  skippedPasses: false,
  checkSources: {},
  mergeMethod: 'merge',
  enqueueLabel: null,
  commentCommands: true,
  requireApproval: true,
  requiredChecksFrom: 'settings',
};

/** A required check as the settings resource shows and takes it. */
export interface RequiredCheckSetting {
  name: string;
  source: CheckSourceKind;
  app?: string;
}

/** The stored document (`MergeQueue.policy`) with its defaults; anything unreadable is the default. */
export function policyOf(stored: unknown): QueuePolicy {
  const doc = stored !== null && typeof stored === 'object' && !Array.isArray(stored) ? (stored as Record<string, unknown>) : {};
  const onHeadPush = HEAD_PUSH_POLICIES.includes(doc.onHeadPush as HeadPushPolicy) ? (doc.onHeadPush as HeadPushPolicy) : DEFAULT_POLICY.onHeadPush;
  const skippedPasses = doc.skippedPasses === true;
  const checkSources: Record<string, CheckBinding> = {};
  const sources = doc.checkSources !== null && typeof doc.checkSources === 'object' ? (doc.checkSources as Record<string, unknown>) : {};
  for (const [name, b] of Object.entries(sources)) {
    const binding = b as { source?: unknown; app?: unknown };
    if (binding?.source === 'status') checkSources[name] = { source: 'status' };
    else if (binding?.source === 'checkRun' && typeof binding.app === 'string' && binding.app) checkSources[name] = { source: 'checkRun', app: binding.app };
  }
  const mergeMethod = MERGE_METHODS.includes(doc.mergeMethod as MergeMethod) ? (doc.mergeMethod as MergeMethod) : DEFAULT_POLICY.mergeMethod;
  const enqueueLabel = typeof doc.enqueueLabel === 'string' && LABEL_NAME.test(doc.enqueueLabel) ? doc.enqueueLabel : null;
  const commentCommands = doc.commentCommands !== false;
  const requireApproval = doc.requireApproval !== false;
  const requiredChecksFrom = REQUIRED_CHECKS_FROM.includes(doc.requiredChecksFrom as RequiredChecksFrom)
    ? (doc.requiredChecksFrom as RequiredChecksFrom)
    : DEFAULT_POLICY.requiredChecksFrom;
  return { onHeadPush, skippedPasses, checkSources, mergeMethod, enqueueLabel, commentCommands, requireApproval, requiredChecksFrom };
}

/** The stored document of a policy: only what differs from the defaults, and bindings only for `requiredChecks`. */
export function storedPolicy(policy: QueuePolicy, requiredChecks: readonly string[]): Record<string, unknown> {
  const checkSources = Object.fromEntries(Object.entries(policy.checkSources).filter(([name]) => requiredChecks.includes(name)));
  return {
    ...(policy.onHeadPush !== DEFAULT_POLICY.onHeadPush && { onHeadPush: policy.onHeadPush }),
    ...(policy.skippedPasses && { skippedPasses: true }),
    ...(Object.keys(checkSources).length > 0 && { checkSources }),
    ...(policy.mergeMethod !== DEFAULT_POLICY.mergeMethod && { mergeMethod: policy.mergeMethod }),
    ...(policy.enqueueLabel !== null && { enqueueLabel: policy.enqueueLabel }),
    ...(!policy.commentCommands && { commentCommands: false }),
    ...(!policy.requireApproval && { requireApproval: false }),
    ...(policy.requiredChecksFrom !== DEFAULT_POLICY.requiredChecksFrom && { requiredChecksFrom: policy.requiredChecksFrom }),
  };
}

/** The queue's required checks with where each must come from, in the queue's order. */
export function requiredCheckSettings(requiredChecks: readonly string[], policy: QueuePolicy): RequiredCheckSetting[] {
  return requiredChecks.map((name) => {
    const b = policy.checkSources[name];
    if (b?.source === 'status') return { name, source: 'status' };
    return { name, source: 'checkRun', ...(b?.app !== undefined && { app: b.app }) };
  });
}

/** The bindings of required checks as given (`{name, source?, app?}`), or an Error naming what is inconsistent. */
export function bindingsOf(checks: readonly RequiredCheckSetting[]): { names: string[]; checkSources: Record<string, CheckBinding> } {
  const names: string[] = [];
  const checkSources: Record<string, CheckBinding> = {};
  for (const [i, c] of checks.entries()) {
    if (names.includes(c.name)) throw new Error(`requiredChecks.${i}.name: ${c.name} is named twice`);
    names.push(c.name);
    if (c.source === 'status') {
      if (c.app !== undefined) throw new Error(`requiredChecks.${i}.app: a check taken from commit statuses has no app`);
      checkSources[c.name] = { source: 'status' };
    } else if (c.app !== undefined) checkSources[c.name] = { source: 'checkRun', app: c.app };
  }
  return { names, checkSources };
}

/** Where a GitHub check result came from, as the webhook parser reads it. */
export type ReportedCheckSource = { kind: 'checkRun' | 'checkSuite'; appId?: string; appSlug?: string } | { kind: 'status' };

export interface ReportedCheck {
  name: string;
  /** GitHub's rule: `success` for success, neutral and skipped. */
  state: 'success' | 'failure';
  source: ReportedCheckSource;
  /** The conclusion was `skipped` or `neutral`. */
  skipped?: boolean;
}

export type CheckCount = { counts: true; state: 'success' | 'failure' } | { counts: false; why: string };

/**
 * Whether a GitHub check result counts for the required check it names, and as what:
 * - a check bound to an app (`{name, app}`) counts only check runs of that app (its id or slug);
 * - a plain name counts check runs of any app, never commit statuses;
 * - `{name, source: "status"}` counts only commit statuses;
 * - a check suite never counts: its payload names only its app (every workflow of GitHub Actions is
 *   `github-actions`), so it cannot be bound to one required check;
 * - `skipped` and `neutral` count as a pass only with `skippedPasses` (GitHub's own rule); otherwise
 *   the check waits for a real result.
 */
export function countCheck(policy: QueuePolicy, check: ReportedCheck): CheckCount {
  const binding = policy.checkSources[check.name];
  const { source } = check;
  if (source.kind === 'checkSuite') {
    return {
      counts: false,
      why: `a check suite (app ${appName(source)}) names only its app, not a workflow or a check, so it counts for no required check; require the check run's name`,
    };
  }
  if (source.kind === 'status') {
    if (binding?.source !== 'status')
      return { counts: false, why: `reported by a commit status, which counts only for a check set to {name: "${check.name}", source: "status"}` };
  } else if (binding?.source === 'status') {
    return { counts: false, why: `reported by a check run of app ${appName(source)}; the queue takes ${check.name} from commit statuses` };
  } else if (binding?.app !== undefined && !sameApp(binding.app, source)) {
    return { counts: false, why: `reported by a check run of app ${appName(source)}; the queue takes ${check.name} only from app ${binding.app}` };
  }
  if (check.skipped === true && !policy.skippedPasses) {
    return { counts: false, why: 'skipped on the candidate (skipped or neutral is no pass unless the queue sets skippedPasses)' };
  }
  return { counts: true, state: check.state };
}

function sameApp(app: string, source: { appId?: string; appSlug?: string }): boolean {
  return /^[0-9]+$/.test(app) ? source.appId === app : source.appSlug !== undefined && source.appSlug.toLowerCase() === app.toLowerCase();
}

function appName(source: { appId?: string; appSlug?: string }): string {
  return source.appSlug ?? source.appId ?? '(unnamed)';
}
