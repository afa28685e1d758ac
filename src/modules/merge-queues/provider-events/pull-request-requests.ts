/*
 * Enqueue and dequeue from the pull request (issue 39): which queue a label or a `/queue` `/dequeue`
 * comment is for, whether it is accepted, and the answer written on the PR. Pure: the facts come in
 * (what GitHub said), the decision and the words go out.
 */

/** How an entry came, and who asked (MergeQueueEntry.origin, and the enqueue event's `origin`). */
export interface EntryOrigin {
  via: 'api' | 'label' | 'comment';
  /** The principal's id (api), or the GitHub login (label, comment). */
  actor: string;
  actorKind: 'principal' | 'github';
}

/** A request made on a PR: a label added or removed, or a comment command. */
export interface PrRequest {
  via: 'label' | 'comment';
  action: 'enqueue' | 'dequeue';
  number: number;
  /** The GitHub login of who added or removed the label, or wrote the comment. */
  login: string;
  /** The label (via label). */
  label?: string;
}

/** A queue of the repository as a request sees it: its base and the settings that decide. */
export interface RequestQueue {
  id: string;
  baseRef: string;
  enqueueLabel: string | null;
  commentCommands: boolean;
  requireApproval: boolean;
}

/** The queues a request may be for: the label's (its `enqueueLabel`), or those that take comment commands. */
export function queuesFor<Q extends RequestQueue>(request: Pick<PrRequest, 'via' | 'label'>, queues: readonly Q[]): Q[] {
  return queues.filter((q) => (request.via === 'label' ? q.enqueueLabel !== null && q.enqueueLabel === request.label : q.commentCommands));
}

/** The PR as GitHub answered it, and the facts an enqueue is decided on. */
export interface EnqueueFacts {
  pull: { state: 'open' | 'closed'; draft: boolean; baseRef: string; headSha: string } | null;
  /** GitHub's review decision and the head it was decided for (asked only when the queue requires approval). */
  review?: { decision: string | null; headSha: string } | null;
}

/** Why an enqueue is refused (said on the PR), or the queue it goes to. */
export type EnqueueDecision<Q> = { accepted: true; queue: Q } | { accepted: false; why: string };

/**
 * An enqueue by someone with write permission: accepted for an open, non-draft PR whose base is the
 * base of one of the `queues` the request may be for and, where that queue requires approval, whose
 * review decision is APPROVED for the head being queued.
 */
export function decideEnqueue<Q extends RequestQueue>(queues: readonly Q[], facts: EnqueueFacts): EnqueueDecision<Q> {
  const { pull } = facts;
  if (!pull) return { accepted: false, why: 'GitHub knows no such pull request' };
  if (pull.state !== 'open') return { accepted: false, why: 'the pull request is closed' };
  if (pull.draft) return { accepted: false, why: 'the pull request is a draft; mark it ready for review first' };
  const queue = queues.find((q) => q.baseRef === pull.baseRef);
  if (!queue) {
    const bases = [...new Set(queues.map((q) => `\`${q.baseRef}\``))].join(', ');
    return { accepted: false, why: `its base is \`${pull.baseRef}\`, and the merge queue takes pull requests into ${bases} only; change the base first` };
  }
  if (queue.requireApproval) {
    const review = facts.review;
    if (!review) return { accepted: false, why: 'GitHub gave no review decision for it, and this queue requires an approved pull request' };
    if (review.headSha !== pull.headSha)
      return {
        accepted: false,
        why: `GitHub's review decision is for ${review.headSha.slice(0, 12)}, not the head ${pull.headSha.slice(0, 12)} (a push meanwhile)`,
      };
    if (review.decision !== 'APPROVED')
      return {
        accepted: false,
        why: `its review decision is ${review.decision ?? 'none'}, and this queue requires an approved pull request; get an approving review first`,
      };
  }
  return { accepted: true, queue };
}

/** Whether a GitHub permission may drive the queue (write, maintain or admin; GitHub's `canWrite`). */
export function permissionRefusal(login: string, canWrite: boolean, permission: string, repository: string): string | undefined {
  if (canWrite) return undefined;
  return `@${login} has ${permission === 'none' ? 'no' : `\`${permission}\``} permission on ${repository}, and the merge queue takes requests only from people with write, maintain or admin permission`;
}

/** What a request was, as the answer names it. */
function what(request: PrRequest): string {
  if (request.via === 'label') return `${request.action === 'enqueue' ? 'adding' : 'removing'} the label \`${request.label}\``;
  return `the comment \`/${request.action === 'enqueue' ? 'queue' : 'dequeue'}\``;
}

/** How to ask again. */
function again(request: PrRequest): string {
  if (request.via === 'comment') return `comment \`/${request.action === 'enqueue' ? 'queue' : 'dequeue'}\` again`;
  return request.action === 'enqueue'
    ? `remove the label \`${request.label}\` and add it again`
    : `add the label \`${request.label}\` back and remove it again`;
}

/**
 * The comment that answers a refused request on the PR: who asked, what was refused, why, and what to
 * do. Its first line is never a command (it starts with the person's handle).
 */
export function refusalComment(request: PrRequest, why: string): string {
  const refused = request.action === 'enqueue' ? 'did not queue this pull request' : 'did not remove this pull request from the queue';
  const stays = request.action === 'dequeue' && request.via === 'label' ? ' It stays in the queue.' : '';
  return `@${request.login}: the merge queue ${refused} (${what(request)}): ${why}.${stays}\n\nOnce that is fixed, ${again(request)}.`;
}

/** The reason an entry removed from the PR carries (its commit status reads "Removed: <reason>"). */
export function dequeueReason(request: PrRequest): string {
  return `dequeued by @${request.login} (${request.via === 'label' ? `label ${request.label} removed` : '/dequeue'})`;
}

/** The origin an entry made from the PR records. */
export function originOf(request: PrRequest): EntryOrigin {
  return { via: request.via, actor: request.login, actorKind: 'github' };
}
