import { randomUUID } from 'node:crypto';
import type { Octokit } from '@octokit/rest';
import { ProviderFailure } from './git-provider.port';
import { call } from './github.provider';
import { GitHubPullRequests } from './github-pull-requests';
import { type GitPerson, type PrCommit, replayOrder, squashAuthor, squashMessage, subjectOf } from './land-messages';
import {
  type CandidateHead,
  type CandidateResult,
  type Fence,
  fullRef,
  type LandedPr,
  type LandMethod,
  MAX_CHANGED_PATHS,
  MergeQueueGit,
} from './merge-queue-git';

const SHA = /^[0-9a-f]{40}$/;
/** Who commits what a squash or rebase writes (the author is the PR's). */
const MERGE_QUEUE_COMMITTER = { name: 'Merge Queue', email: 'merge-queue@delivery-platform.invalid' };
/** The compare API lists at most this many files; a list this long may have been cut. */
const COMPARE_FILES_CAP = 300;

/**
 * GitHub and GitHub Enterprise Server, over the REST API with the integration's token: the git
 * database refs and commits, compare, and the merges endpoint; the land is GraphQL's `updateRefs`,
 * GitHub's one compare-and-swap of refs (atomic over several refs, each checked against its
 * `beforeOid`). GitHub merges on the server, so a candidate is built on a scratch branch of its
 * own operation (two executors never build on one branch). Provider failures propagate as
 * ProviderFailure.
 */
export class GitHubMergeQueueGit extends MergeQueueGit {
  private readonly repo: { owner: string; repo: string };
  private repositoryId?: string;

  /** `nameWithOwner`: the code source's `owner/name`. */
  constructor(
    private readonly api: Octokit,
    nameWithOwner: string,
  ) {
    super();
    const [owner, repo] = nameWithOwner.split('/');
    this.repo = { owner, repo };
  }

  /** The repository's pull requests as a conversation (the PR, a person's permission, comments, reactions), with the same client. */
  pullRequests(): GitHubPullRequests {
    return new GitHubPullRequests(this.api, `${this.repo.owner}/${this.repo.repo}`);
  }

  /** A commit status on `sha` (the merge queue's report on a PR head or candidate); provider failures propagate. */
  async createCommitStatus(
    sha: string,
    status: { state: 'pending' | 'success' | 'failure' | 'error'; context: string; description: string; targetUrl?: string },
  ): Promise<void> {
    await call(() =>
      this.api.rest.repos.createCommitStatus({
        ...this.repo,
        sha,
        state: status.state,
        context: status.context,
        description: status.description,
        ...(status.targetUrl !== undefined && { target_url: status.targetUrl }),
      }),
    );
  }

  /** Closes PR `number` (PATCH /pulls/{n}; closing a closed PR changes nothing); provider failures propagate. */
  async closePullRequest(number: number): Promise<void> {
    await call(() => this.api.rest.pulls.update({ ...this.repo, pull_number: number, state: 'closed' }));
  }

  /** A comment on PR `number` (POST /issues/{n}/comments); provider failures propagate. */
  async commentOnPullRequest(number: number, body: string): Promise<void> {
    await call(() => this.api.rest.issues.createComment({ ...this.repo, issue_number: number, body }));
  }

  /**
   * GitHub's review decision on PR `number` under the repository's review rules (GraphQL
   * `pullRequest { reviewDecision headRefOid }`): APPROVED, CHANGES_REQUESTED, REVIEW_REQUIRED, or
   * null when the rules require no review; with the head it was decided for. Null when there is no
   * such PR. Provider failures propagate as ProviderFailure.
   */
  async reviewDecision(number: number): Promise<{ decision: string | null; headSha: string } | null> {
    const query = `query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { pullRequest(number: $number) { reviewDecision headRefOid } } }`;
    try {
      const data = await this.api.graphql<{ repository: { pullRequest: { reviewDecision: string | null; headRefOid: string } | null } | null }>(query, {
        owner: this.repo.owner,
        name: this.repo.repo,
        number,
      });
      const pr = data.repository?.pullRequest;
      return pr ? { decision: pr.reviewDecision ?? null, headSha: pr.headRefOid } : null;
    } catch (error) {
      if ((error as { name?: string }).name !== 'GraphqlResponseError') return call(() => Promise.reject(error));
      // GitHub answers an unknown PR or repository with a NOT_FOUND error entry.
      if (((error as { errors?: { type?: string }[] }).errors ?? []).some((e) => e.type === 'NOT_FOUND')) return null;
      throw new ProviderFailure('rejected', `GitHub refused the review decision of #${number}: ${(error as Error).message}`);
    }
  }

  /**
   * PR `number`'s title as GitHub has it now (GET /repos/{owner}/{repo}/pulls/{pull_number}), or
   * null when GitHub knows no such PR. Provider failures propagate as ProviderFailure.
   */
  async pullRequestTitle(number: number): Promise<string | null> {
    try {
      const { data } = await call(() => this.api.rest.pulls.get({ ...this.repo, pull_number: number }));
      return data.title;
    } catch (error) {
      if (isFailure(error, 'not_found')) return null;
      throw error;
    }
  }

  /**
   * The annotations of check run `checkRunId` whose level is `failure` (GET
   * /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations, 50 a page, at most `maxPages`
   * pages), in GitHub's order: null when GitHub knows no such check run. `more` says pages were
   * left unread. Provider failures propagate as ProviderFailure.
   */
  async checkRunFailureAnnotations(
    checkRunId: number,
    maxPages: number,
  ): Promise<{ annotations: { path: string; title: string | null; message: string | null }[]; more: boolean } | null> {
    const perPage = 50;
    const annotations: { path: string; title: string | null; message: string | null }[] = [];
    for (let page = 1; page <= maxPages; page++) {
      let data: { path: string; annotation_level: string | null; title: string | null; message: string | null }[];
      try {
        ({ data } = await call(() => this.api.rest.checks.listAnnotations({ ...this.repo, check_run_id: checkRunId, per_page: perPage, page })));
      } catch (error) {
        if (isFailure(error, 'not_found')) return null;
        throw error;
      }
      for (const a of data) if (a.annotation_level === 'failure') annotations.push({ path: a.path, title: a.title, message: a.message });
      if (data.length < perPage) return { annotations, more: false };
    }
    return { annotations, more: true };
  }

  async readRef(ref: string): Promise<string | null> {
    try {
      const { data } = await call(() => this.api.rest.git.getRef({ ...this.repo, ref: apiRef(ref) }));
      return data.object.sha;
    } catch (error) {
      if (isFailure(error, 'not_found')) return null;
      throw error;
    }
  }

  async hasCommit(sha: string): Promise<boolean> {
    if (!SHA.test(sha)) return false;
    try {
      await call(() => this.api.rest.git.getCommit({ ...this.repo, commit_sha: sha }));
      return true;
    } catch (error) {
      if (isFailure(error, 'not_found')) return false;
      throw error;
    }
  }

  /**
   * Resets the scratch branch to the base (so a rebuild after a crash starts clean), merges each
   * head into it with POST /merges, and deletes it. The candidate stays reachable through the
   * candidate ref once published. GitHub's merge commits carry the time they were made, so a
   * rebuild gives a different (equivalent) commit. A squash takes the merge's tree into one commit
   * on the candidate so far (POST /git/commits) and moves the branch to it; a rebase replays each
   * commit the PR has (GET /compare) as in replayCommit. The PR's merge is made first in every
   * method, so a conflict is found and named as for a merge.
   */
  async buildCandidate(
    baseSha: string,
    heads: readonly CandidateHead[],
    candidateRef: string,
    options: { scratch?: string; signal?: AbortSignal; method?: LandMethod } = {},
  ): Promise<CandidateResult> {
    const method = options.method ?? 'merge';
    const branch = scratchBranch('build', candidateRef, options.scratch);
    await this.forceRef(`refs/heads/${branch}`, baseSha);
    try {
      let current = baseSha;
      let tree = method === 'merge' ? '' : await this.treeOf(baseSha);
      const landed: LandedPr[] = [];
      for (const [i, head] of heads.entries()) {
        options.signal?.throwIfAborted();
        if (!(await this.hasCommit(head.headSha))) {
          return { ok: false, conflictEntryId: head.entryId, reason: `#${head.number} head ${head.headSha} is not in the repository`, paths: [] };
        }
        const merged = await this.merge(branch, head.headSha, `Merge #${head.number} (${head.headSha.slice(0, 12)})`);
        if (merged === 'conflict') {
          const culprit = await this.firstConflictingPartner(scratchBranch('probe', candidateRef, options.scratch), baseSha, heads.slice(0, i), head);
          return {
            ok: false,
            conflictEntryId: head.entryId,
            reason: `#${head.number} conflicts with ${culprit} (GitHub does not say in which paths)`,
            paths: [],
          };
        }
        // 204: the branch already contains the head; nothing was added.
        if (merged === 'contained') {
          landed.push({ entryId: head.entryId, number: head.number, commits: [] });
          continue;
        }
        let commits: string[];
        if (method === 'merge') commits = [merged.sha];
        else {
          const prCommits = await this.prCommits(current, head);
          if (!prCommits.ok) return { ok: false, conflictEntryId: head.entryId, reason: prCommits.reason, paths: [] };
          if (method === 'squash') {
            const author = squashAuthor(prCommits.commits) ?? prCommits.head;
            commits = [await this.createCommit(merged.tree, [current], squashMessage(head.number, head.title, prCommits.commits, author), author)];
            tree = merged.tree;
          } else {
            const probe = scratchBranch('probe', candidateRef, options.scratch);
            const replayed = await this.replay(probe, current, tree, replayOrder(prCommits.commits), options.signal);
            if (!replayed.ok) {
              const { sha, message } = replayed.commit;
              return {
                ok: false,
                conflictEntryId: head.entryId,
                reason: `#${head.number} conflicts when rebased: its commit ${sha.slice(0, 12)} ("${subjectOf(message)}") does not apply (GitHub does not say in which paths)`,
                paths: [],
              };
            }
            commits = replayed.commits;
            tree = replayed.tree;
          }
          // The next PR is merged onto what this one became.
          await this.forceRef(`refs/heads/${branch}`, commits.at(-1) ?? current);
        }
        current = commits.at(-1) ?? current;
        landed.push({ entryId: head.entryId, number: head.number, commits });
      }
      return { ok: true, candidateSha: current, landed };
    } finally {
      await this.deleteQuietly(`refs/heads/${branch}`);
    }
  }

  /**
   * The commits `head` has that `onto` lacks, as GitHub's compare lists them (at most 250: a PR
   * with more is refused, as no candidate could carry them all), and the head commit's author.
   */
  private async prCommits(onto: string, head: CandidateHead): Promise<{ ok: true; commits: PrCommit[]; head: GitPerson } | { ok: false; reason: string }> {
    const { data } = await call(() => this.api.rest.repos.compareCommitsWithBasehead({ ...this.repo, basehead: `${onto}...${head.headSha}` }));
    if (data.total_commits > data.commits.length) {
      return { ok: false, reason: `#${head.number} has ${data.total_commits} commits; GitHub lists at most ${data.commits.length} to squash or rebase` };
    }
    const person = (p: { name?: string; email?: string; date?: string } | null | undefined): GitPerson => ({
      name: p?.name ?? '',
      email: p?.email ?? '',
      date: p?.date ?? new Date().toISOString(),
    });
    const all = data.commits.map((c) => ({ sha: c.sha, parents: c.parents.map((p) => p.sha), message: c.commit.message, author: person(c.commit.author) }));
    const last = all.find((c) => c.sha === head.headSha) ?? all.at(-1);
    return { ok: true, commits: all.filter((c) => c.parents.length <= 1), head: last?.author ?? person(null) };
  }

  /**
   * Replays `commits` onto `onto` (whose tree is `tree`), one by one: a probe commit with the tree
   * so far and the commit's parent as its only parent, the commit merged into it on the `probe`
   * branch (so the three-way merge's base is that parent: the commit's own change, applied to the
   * tree so far), and the merge's tree committed on what is replayed so far with the commit's
   * author and message. A commit whose change is already there adds nothing; a conflict is the
   * commit that does not apply.
   */
  private async replay(
    probe: string,
    onto: string,
    tree: string,
    commits: readonly PrCommit[],
    signal?: AbortSignal,
  ): Promise<{ ok: true; commits: string[]; tree: string } | { ok: false; commit: PrCommit }> {
    let current = onto;
    const made: string[] = [];
    try {
      for (const c of commits) {
        signal?.throwIfAborted();
        if (c.parents.length === 0) return { ok: false, commit: c };
        await this.forceRef(`refs/heads/${probe}`, await this.createCommit(tree, [c.parents[0]], 'merge-queue replay probe'));
        const picked = await this.merge(probe, c.sha, `Replay ${c.sha.slice(0, 12)}`);
        if (picked === 'conflict') return { ok: false, commit: c };
        if (picked === 'contained' || picked.tree === tree) continue;
        current = await this.createCommit(picked.tree, [current], c.message, c.author);
        tree = picked.tree;
        made.push(current);
      }
      return { ok: true, commits: made, tree };
    } finally {
      await this.deleteQuietly(`refs/heads/${probe}`);
    }
  }

  /** POST /git/commits: a commit of `tree` on `parents`, authored by `author` (else the token's user), committed by the merge queue. */
  private async createCommit(tree: string, parents: readonly string[], message: string, author?: GitPerson): Promise<string> {
    const { data } = await call(() =>
      this.api.rest.git.createCommit({
        ...this.repo,
        message,
        tree,
        parents: [...parents],
        ...(author && { author: { name: author.name, email: author.email, date: author.date } }),
        committer: { ...MERGE_QUEUE_COMMITTER },
      }),
    );
    return data.sha;
  }

  private async treeOf(sha: string): Promise<string> {
    return (await call(() => this.api.rest.git.getCommit({ ...this.repo, commit_sha: sha }))).data.tree.sha;
  }

  async publishRef(ref: string, sha: string): Promise<void> {
    await this.forceRef(fullRef(ref), sha);
  }

  /**
   * GraphQL `updateRefs` with two updates: the fence checked (`beforeOid` = `afterOid`, it stays
   * where it is) and the base moved from `expectedSha`; GitHub performs them atomically, and
   * refuses all when either ref is not at its `beforeOid`. GitHub answers a stale `beforeOid` with
   * a generic GraphQL error, so a refusal is told from other errors by reading both refs again:
   * either moved means refused (false); neither did means the error is something else (thrown).
   */
  async land(ref: string, newSha: string, expectedSha: string, fence: Fence): Promise<boolean> {
    const repositoryId = await this.nodeId();
    try {
      await this.api.graphql(
        `mutation($repositoryId: ID!, $refUpdates: [RefUpdate!]!) { updateRefs(input: { repositoryId: $repositoryId, refUpdates: $refUpdates }) { clientMutationId } }`,
        {
          repositoryId,
          refUpdates: [
            { name: fullRef(fence.ref), beforeOid: fence.sha, afterOid: fence.sha },
            { name: fullRef(ref), beforeOid: expectedSha, afterOid: newSha },
          ],
        },
      );
      return true;
    } catch (error) {
      // No answer, or an HTTP error: classified as every REST call's failure is.
      if ((error as { name?: string }).name !== 'GraphqlResponseError') return call<boolean>(() => Promise.reject(error));
      const [base, fenceNow] = [await this.readRef(ref), await this.readRef(fence.ref)];
      if (base !== expectedSha || fenceNow !== fence.sha) return false;
      // GitHub's own words (a protected branch, a rule), as a person reads them on the queue.
      const messages = ((error as { errors?: { message?: string }[] }).errors ?? []).map((e) => e.message).filter(Boolean);
      throw new ProviderFailure(
        'rejected',
        messages.length ? messages.join('; ') : `GitHub refused the land of ${newSha} onto ${fullRef(ref)}: ${(error as Error).message}`,
      );
    }
  }

  /** A parentless commit with the tree of `treeFrom`'s head and a random message (POST /git/commits), then the ref moved to it. */
  async moveFence(fenceRef: string, treeFrom: string, onlyIfAbsent = false): Promise<string> {
    const head = await this.readRef(treeFrom);
    if (head === null) throw new ProviderFailure('not_found', `${fullRef(treeFrom)} does not exist`);
    const { data: commit } = await call(() => this.api.rest.git.getCommit({ ...this.repo, commit_sha: head }));
    const { data: fence } = await call(() =>
      this.api.rest.git.createCommit({ ...this.repo, message: `merge-queue fence ${randomUUID()}`, tree: commit.tree.sha, parents: [] }),
    );
    if (!onlyIfAbsent) {
      await this.forceRef(fullRef(fenceRef), fence.sha);
      return fence.sha;
    }
    try {
      await call(() => this.api.rest.git.createRef({ ...this.repo, ref: fullRef(fenceRef), sha: fence.sha }));
      return fence.sha;
    } catch (error) {
      if (!isFailure(error, 'rejected')) throw error;
      const current = await this.readRef(fenceRef);
      if (current === null) throw error;
      return current;
    }
  }

  /** The repository's GraphQL node id (its REST `node_id`), read once. */
  private async nodeId(): Promise<string> {
    this.repositoryId ??= (await call(() => this.api.rest.repos.get(this.repo))).data.node_id;
    return this.repositoryId;
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    if (ancestor === descendant) return true;
    const { data } = await call(() => this.api.rest.repos.compareCommitsWithBasehead({ ...this.repo, basehead: `${ancestor}...${descendant}`, per_page: 1 }));
    return data.status === 'ahead' || data.status === 'identical';
  }

  /** The compare API from the merge base (three dots); its file list stops at 300, so a list that long is not known. */
  async changedPaths(baseSha: string, headSha: string): Promise<string[] | null> {
    if (!SHA.test(baseSha) || !SHA.test(headSha)) return null;
    try {
      const { data } = await call(() => this.api.rest.repos.compareCommitsWithBasehead({ ...this.repo, basehead: `${baseSha}...${headSha}`, per_page: 1 }));
      // No list at all is not "changes nothing" (which would put the PR in no lane): not known.
      const files = data.files;
      if (!Array.isArray(files) || files.length >= Math.min(COMPARE_FILES_CAP, MAX_CHANGED_PATHS)) return null;
      return [...new Set(files.flatMap((f) => (f.previous_filename ? [f.previous_filename, f.filename] : [f.filename])))];
    } catch (error) {
      if (isFailure(error, 'not_found')) return null;
      throw error;
    }
  }

  async deleteRef(ref: string): Promise<void> {
    try {
      await call(() => this.api.rest.git.deleteRef({ ...this.repo, ref: apiRef(ref) }));
    } catch (error) {
      if (!isMissingRef(error)) throw error;
    }
  }

  /** Points `ref` at `sha`, creating it when missing. */
  private async forceRef(ref: string, sha: string): Promise<void> {
    try {
      await call(() => this.api.rest.git.updateRef({ ...this.repo, ref: apiRef(ref), sha, force: true }));
    } catch (error) {
      if (!isMissingRef(error)) throw error;
      await call(() => this.api.rest.git.createRef({ ...this.repo, ref, sha }));
    }
  }

  /** Merges `head` into `branch`: the merge commit and its tree, 'contained' when there was nothing to merge, or 'conflict'. */
  private async merge(branch: string, head: string, message: string): Promise<{ sha: string; tree: string } | 'contained' | 'conflict'> {
    try {
      const response = await call(() => this.api.rest.repos.merge({ ...this.repo, base: branch, head, commit_message: message }));
      // Octokit's types know only the 201; GitHub answers 204 when there is nothing to merge.
      return (response.status as number) === 204 ? 'contained' : { sha: response.data.sha, tree: response.data.commit.tree.sha };
    } catch (error) {
      // 409 Merge conflict (classified as a refusal: it is no provider fault).
      if (isFailure(error, 'rejected') && /merge conflict/i.test(error.reason)) return 'conflict';
      throw error;
    }
  }

  /**
   * Which earlier PR of the candidate the head conflicts with, else the base, like the local
   * implementation, by merging pairwise on another scratch branch.
   */
  private async firstConflictingPartner(probe: string, baseSha: string, earlier: readonly CandidateHead[], head: CandidateHead): Promise<string> {
    const conflicts = async (onto: string) => {
      await this.forceRef(`refs/heads/${probe}`, onto);
      return (await this.merge(probe, head.headSha, `Probe #${head.number}`)) === 'conflict';
    };
    try {
      for (const other of earlier) if (await conflicts(other.headSha)) return `#${other.number}`;
      if (await conflicts(baseSha)) return `the base (${baseSha.slice(0, 12)})`;
      return earlier.length ? `#${earlier.map((e) => e.number).join(', #')} together` : 'the base';
    } finally {
      await this.deleteQuietly(`refs/heads/${probe}`);
    }
  }

  /** A scratch branch left behind (the provider failed meanwhile) is reset by the next build. */
  private async deleteQuietly(ref: string): Promise<void> {
    await this.deleteRef(ref).catch(() => undefined);
  }
}

/**
 * The branch a candidate is built on (or probed on): mq-build/<scratch> for the operation's own key
 * (mq-build/<queue>/<operation>), else derived from the candidate ref (mq-build/mq/<queue>/<batch>).
 */
function scratchBranch(purpose: 'build' | 'probe', candidateRef: string, scratch?: string): string {
  return `mq-${purpose}/${scratch ?? fullRef(candidateRef).slice('refs/heads/'.length)}`;
}

/** The ref as GitHub's git/refs paths take it: `heads/main`. */
function apiRef(ref: string): string {
  return fullRef(ref).slice('refs/'.length);
}

function isFailure(error: unknown, kind: ProviderFailure['kind']): error is ProviderFailure {
  return error instanceof ProviderFailure && error.kind === kind;
}

/** GitHub answers 422 "Reference does not exist" for updating or deleting a missing ref (404 on some versions). */
function isMissingRef(error: unknown): boolean {
  return isFailure(error, 'not_found') || (isFailure(error, 'rejected') && /reference does not exist/i.test(error.reason));
}
