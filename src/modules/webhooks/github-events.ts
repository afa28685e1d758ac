/**
 * What a GitHub webhook delivery means to the merge queue, decided from its event name and payload
 * alone (no I/O). Anything not listed is `ignored` with the reason, which the delivery row keeps.
 *
 * | event                         | condition                              | meaning                     |
 * |-------------------------------|----------------------------------------|-----------------------------|
 * | pull_request `synchronize`    |                                        | prHead (withdraw, re-queue) |
 * | pull_request `closed`         | merged or not                          | prClosed (leaves the queue) |
 * | pull_request `edited`         | the title changed (`changes.title`)    | prTitle (the entry's title) |
 * | check_run `completed`         |                                        | check (`name` = check name) |
 * | check_suite `completed`       |                                        | check (`name` = app slug)   |
 * | status                        | state success / failure / error        | check (`name` = context)    |
 * | push                          | a branch, not deleted                  | push (base may have moved)  |
 * | installation `deleted`        |                                        | installation gone (REVOKED) |
 * | installation `suspend`        |                                        | installation suspended      |
 * | pull_request `labeled`        |                                        | prLabel (added)             |
 * | pull_request `unlabeled`      |                                        | prLabel (removed)           |
 * | issue_comment `created`       | on a PR, first line `/queue` `/dequeue`, not by a bot | prCommand |
 * | branch_protection_rule        | created / edited / deleted             | requiredChecksChanged       |
 * | branch_protection_configuration | enabled / disabled                   | requiredChecksChanged       |
 * | repository_ruleset            | created / edited / deleted             | requiredChecksChanged       |
 *
 * A `requiredChecksChanged` re-reads GitHub's required checks for every queue of the repository
 * whose checks come from branch protection (the payload's rule is not trusted for the checks: its
 * branch pattern and a ruleset's conditions are GitHub's to match). An organization ruleset's
 * delivery names no repository: every such queue of the integration is read again.
 *
 * Comments by bots (`user.type` Bot, or posted through a GitHub App: `performed_via_github_app`)
 * are ignored, the queue's own answers included, so no answer ever starts another. Who may act on
 * a label or command (write permission), and on which queue, is the worker's to ask GitHub.
 *
 * A `check` carries where it came from (`source`: a check run or suite with its app's id and slug,
 * or a commit status) and whether GitHub's conclusion was `skipped` or `neutral` (`state` is then
 * `success`, GitHub's own rule): which sources and conclusions count is the queue's to decide.
 */
/** Where a failing check run's failing tests may be read (its annotations), as its delivery names them. */
export interface CheckRunRef {
  id: number;
  annotations: number;
  title?: string;
}

export type CheckSource = { kind: 'checkRun' | 'checkSuite'; appId?: string; appSlug?: string } | { kind: 'status' };

export type GithubEvent =
  | { kind: 'prHead'; repository: string; number: number; headSha: string; baseRef: string }
  | { kind: 'prClosed'; repository: string; number: number; baseRef: string }
  | { kind: 'prTitle'; repository: string; number: number; title: string; baseRef: string }
  | {
      kind: 'check';
      repository: string;
      sha: string;
      name: string;
      state: 'success' | 'failure';
      url?: string;
      source: CheckSource;
      skipped?: true;
      /** A failing check run's id, its annotations' count and its output's title (where the failing tests may be read). */
      checkRun?: CheckRunRef;
    }
  | { kind: 'push'; repository: string; branch: string; after: string }
  | { kind: 'prLabel'; repository: string; number: number; baseRef: string; label: string; added: boolean; actor: GithubActor }
  | { kind: 'prCommand'; repository: string; number: number; command: PrCommand; commentId: number; actor: GithubActor }
  | { kind: 'installationGone'; installationId: string; reason: string }
  | { kind: 'installationSuspended'; installationId: string; reason: string }
  | { kind: 'requiredChecksChanged'; repository?: string; reason: string }
  | { kind: 'ignored'; reason: string };

/** Who did something on GitHub: the account's login and numeric id (as a string), as the delivery names them. */
export interface GithubActor {
  login: string;
  id?: string;
}

/** The comment commands on a PR (the comment's first line, trimmed, is exactly `/queue` or `/dequeue`). */
export const PR_COMMANDS = ['queue', 'dequeue'] as const;
export type PrCommand = (typeof PR_COMMANDS)[number];

/** The command a comment body gives, if any: its first line, whitespace trimmed, is exactly `/queue` or `/dequeue`. */
export function commandOf(body: unknown): PrCommand | undefined {
  if (typeof body !== 'string') return undefined;
  const first = body.split(/\r?\n/, 1)[0].trim();
  return PR_COMMANDS.find((c) => first === `/${c}`);
}

/** Conclusions GitHub counts as passing a required check. */
const PASSING = ['success', 'neutral', 'skipped'];
/** Passing by GitHub's rule without a real result. */
const SKIPPED = ['neutral', 'skipped'];
const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const sha = (v: unknown): string | undefined => (typeof v === 'string' && SHA.test(v) ? v : undefined);
const httpUrl = (v: unknown): string | undefined => (typeof v === 'string' && /^https?:\/\//.test(v) && v.length <= 2048 ? v : undefined);

/** The repository's `owner/name` of a payload, if it names one. */
export function repositoryOf(payload: unknown): string | undefined {
  return str(obj(obj(payload)?.repository)?.full_name);
}

/** The app installation id of a payload (GitHub App deliveries), as a string. */
export function installationOf(payload: unknown): string | undefined {
  const id = obj(obj(payload)?.installation)?.id;
  return typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : str(id);
}

/** An account of the payload (`sender`, `comment.user`): its login and id. */
function actorOf(account: unknown): GithubActor | undefined {
  const a = obj(account);
  const login = str(a?.login);
  if (!login) return undefined;
  const id = a?.id;
  return { login, ...(typeof id === 'number' && Number.isSafeInteger(id) && { id: String(id) }) };
}

/** The GitHub App of a check run or suite: its id (as a string) and slug, each if the payload names it. */
function appOf(app: unknown): { appId?: string; appSlug?: string } {
  const a = obj(app);
  const id = a?.id;
  const appId = typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? String(id) : undefined;
  const appSlug = str(a?.slug);
  return { ...(appId && { appId }), ...(appSlug && { appSlug }) };
}

export function parseGithubEvent(event: string, payload: unknown): GithubEvent {
  const p = obj(payload) ?? {};
  const action = str(p.action);
  const repository = repositoryOf(p);
  const ignored = (reason: string): GithubEvent => ({ kind: 'ignored', reason });
  switch (event) {
    case 'pull_request': {
      const pr = obj(p.pull_request);
      const number = typeof p.number === 'number' ? p.number : pr?.number;
      const baseRef = str(obj(pr?.base)?.ref);
      if (!repository || typeof number !== 'number' || !Number.isInteger(number) || !baseRef) return ignored('pull_request without repository, number or base');
      if (action === 'synchronize') {
        const headSha = sha(obj(pr?.head)?.sha);
        return headSha ? { kind: 'prHead', repository, number, headSha, baseRef } : ignored('synchronize without a head sha');
      }
      if (action === 'closed') return { kind: 'prClosed', repository, number, baseRef };
      if (action === 'edited') {
        const title = typeof pr?.title === 'string' ? pr.title : undefined;
        if (!obj(obj(p.changes)?.title)) return ignored('pull_request edited without a title change');
        return title ? { kind: 'prTitle', repository, number, title, baseRef } : ignored('pull_request edited without a title');
      }
      if (action === 'labeled' || action === 'unlabeled') {
        const label = str(obj(p.label)?.name);
        const actor = actorOf(p.sender);
        if (!label || !actor) return ignored(`pull_request ${action} without a label name or sender`);
        return { kind: 'prLabel', repository, number, baseRef, label, added: action === 'labeled', actor };
      }
      return ignored(`pull_request ${action ?? '(no action)'} is not acted on`);
    }
    case 'check_run': {
      const run = obj(p.check_run);
      if (action !== 'completed') return ignored(`check_run ${action ?? '(no action)'} is not a result`);
      const headSha = sha(run?.head_sha);
      const name = str(run?.name);
      if (!repository || !headSha || !name) return ignored('check_run without repository, head_sha or name');
      const url = httpUrl(run?.details_url) ?? httpUrl(run?.html_url);
      const state = PASSING.includes(String(run?.conclusion)) ? 'success' : 'failure';
      const output = obj(run?.output);
      const id = run?.id;
      const annotations = output?.annotations_count;
      const title = str(output?.title)?.slice(0, 200);
      const checkRun =
        state === 'failure' && typeof id === 'number' && Number.isSafeInteger(id)
          ? { id, annotations: typeof annotations === 'number' && annotations > 0 ? annotations : 0, ...(title && { title }) }
          : undefined;
      return {
        kind: 'check',
        repository,
        sha: headSha,
        name,
        state,
        ...(url && { url }),
        source: { kind: 'checkRun', ...appOf(run?.app) },
        ...(SKIPPED.includes(String(run?.conclusion)) && { skipped: true as const }),
        ...(checkRun && { checkRun }),
      };
    }
    case 'check_suite': {
      const suite = obj(p.check_suite);
      if (action !== 'completed') return ignored(`check_suite ${action ?? '(no action)'} is not a result`);
      const headSha = sha(suite?.head_sha);
      const name = str(obj(suite?.app)?.slug);
      if (!repository || !headSha || !name) return ignored('check_suite without repository, head_sha or app');
      return {
        kind: 'check',
        repository,
        sha: headSha,
        name,
        state: PASSING.includes(String(suite?.conclusion)) ? 'success' : 'failure',
        source: { kind: 'checkSuite', ...appOf(suite?.app) },
        ...(SKIPPED.includes(String(suite?.conclusion)) && { skipped: true as const }),
      };
    }
    case 'status': {
      const state = str(p.state);
      const commit = sha(p.sha);
      const name = str(p.context);
      if (!repository || !commit || !name) return ignored('status without repository, sha or context');
      if (state === 'pending') return ignored('status pending is not a result');
      const url = httpUrl(p.target_url);
      return {
        kind: 'check',
        repository,
        sha: commit,
        name,
        state: state === 'success' ? 'success' : 'failure',
        ...(url && { url }),
        source: { kind: 'status' },
      };
    }
    case 'push': {
      const ref = str(p.ref);
      const after = sha(p.after);
      if (!repository || !ref?.startsWith('refs/heads/')) return ignored('push to no branch');
      if (p.deleted === true || !after || /^0+$/.test(after)) return ignored('branch deleted');
      return { kind: 'push', repository, branch: ref.slice('refs/heads/'.length), after };
    }
    case 'issue_comment': {
      if (action !== 'created') return ignored(`issue_comment ${action ?? '(no action)'} is not acted on`);
      const issue = obj(p.issue);
      const comment = obj(p.comment);
      const number = issue?.number;
      if (!repository || typeof number !== 'number' || !Number.isInteger(number) || !comment)
        return ignored('issue_comment without repository, issue number or comment');
      if (!obj(issue?.pull_request)) return ignored('a comment on an issue, not a pull request');
      const user = obj(comment.user);
      if (user?.type === 'Bot' || obj(comment.performed_via_github_app)) return ignored('a comment by a bot or an app (the queue answers none)');
      const command = commandOf(comment.body);
      if (!command) return ignored('a comment that is no command');
      const actor = actorOf(user) ?? actorOf(p.sender);
      const commentId = comment.id;
      if (!actor || typeof commentId !== 'number' || !Number.isSafeInteger(commentId)) return ignored('issue_comment without its author or id');
      return { kind: 'prCommand', repository, number, command, commentId, actor };
    }
    case 'installation': {
      const installationId = installationOf(p);
      if (!installationId) return ignored('installation without id');
      if (action === 'deleted') return { kind: 'installationGone', installationId, reason: `the GitHub App installation ${installationId} was deleted` };
      if (action === 'suspend') return { kind: 'installationSuspended', installationId, reason: `the GitHub App installation ${installationId} was suspended` };
      return ignored(`installation ${action ?? '(no action)'} is not acted on`);
    }
    case 'branch_protection_rule':
    case 'branch_protection_configuration':
    case 'repository_ruleset': {
      const acted = event === 'branch_protection_configuration' ? ['enabled', 'disabled'] : ['created', 'edited', 'deleted'];
      if (!action || !acted.includes(action)) return ignored(`${event} ${action ?? '(no action)'} is not acted on`);
      // A branch protection rule always belongs to a repository; a ruleset may be the organization's.
      if (!repository && event !== 'repository_ruleset') return ignored(`${event} without repository`);
      const what =
        event === 'repository_ruleset'
          ? `ruleset ${String(obj(p.repository_ruleset)?.id ?? '?')} ${action}`
          : event === 'branch_protection_rule'
            ? `branch protection rule ${str(obj(p.rule)?.name) ?? '?'} ${action}`
            : `branch protection ${action}`;
      return { kind: 'requiredChecksChanged', ...(repository && { repository }), reason: what };
    }
    default:
      return ignored(`event ${event} is not acted on`);
  }
}
