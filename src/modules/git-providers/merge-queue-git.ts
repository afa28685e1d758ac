import { randomUUID } from 'node:crypto';
import { type GitPerson, type PrCommit, squashAuthor, squashMessage, subjectOf } from './land-messages';
import { GitCommandError, type LocalGitRunner } from './local-git.runner';

export { GitCommandError };

/** A PR head to merge into a candidate, in the planner's order. */
export interface CandidateHead {
  entryId: string;
  number: number;
  headSha: string;
  /** The PR's title, for a squash commit's message (null or absent: see squashTitle). */
  title?: string | null;
}

/**
 * How a candidate is shaped, so that what lands is exactly the commit CI tested: a merge commit per
 * PR (`merge`), one squashed commit per PR (`squash`), or the PR's commits replayed (`rebase`).
 */
export const LAND_METHODS = ['merge', 'squash', 'rebase'] as const;
export type LandMethod = (typeof LAND_METHODS)[number];

/** The commits a PR added to a candidate, oldest first (none when its head was already contained). */
export interface LandedPr {
  entryId: string;
  number: number;
  commits: string[];
}

/** The fence a land is issued under: `ref` must still point at `sha` for the land to apply. */
export interface Fence {
  ref: string;
  sha: string;
}

export type CandidateResult = { ok: true; candidateSha: string; landed: LandedPr[] } | { ok: false; conflictEntryId: string; reason: string; paths: string[] };

/**
 * The git operations the merge-queue executor needs, and nothing more, on one repository (the
 * queue's code source: MergeQueueGits, in merge-queues/engine/gits.ts, gives one). Every method is idempotent:
 * the executor may repeat any of them after a crash. Implementations: LocalMergeQueueGit (the
 * `git` CLI on a bare repository on this server's disk) and GitHubMergeQueueGit (GitHub and GitHub
 * Enterprise Server over their REST API). A provider failure (ProviderFailure) propagates as it is.
 */
export abstract class MergeQueueGit {
  /** The commit `ref` points at, or null when it does not exist. */
  abstract readRef(ref: string): Promise<string | null>;
  /**
   * Merges `heads` in order onto `baseSha` and returns the candidate commit, without a work tree,
   * in the shape of `options.method` (default `merge`): a merge commit per head, one squash commit
   * per head (the merge's tree, the base as its only parent, GitHub's squash message), or the head's
   * commits (merges left out) replayed one by one, each keeping its author and message; with the
   * commits each PR added (`landed`). A commit of a rebase that does not apply is the PR's conflict.
   * A head already contained in the candidate so far adds no commit (no empty merge); when every
   * head is, the candidate is `baseSha` itself.
   * Building again after a crash is harmless (locally the same base and heads even give the same
   * commit). `candidateRef` is where the candidate will be published: an implementation that needs
   * a branch to build on derives its name from it. On a conflict, names the PR that could not be
   * merged and what it conflicts with. `scratch`: a key unique to the operation building it, for an
   * implementation that builds on a branch (two executors never share one); `signal`: stop
   * between steps once aborted (the executor lost its lease).
   */
  abstract buildCandidate(
    baseSha: string,
    heads: readonly CandidateHead[],
    candidateRef: string,
    options?: { scratch?: string; signal?: AbortSignal; method?: LandMethod },
  ): Promise<CandidateResult>;
  /** Points `ref` at `sha` whatever it pointed at (candidate refs belong to the queue alone). */
  abstract publishRef(ref: string, sha: string): Promise<void>;
  /**
   * The fenced land: moves `ref` from `expectedSha` to `newSha` only if `fence.ref` still points
   * at `fence.sha`, both checked and the move made in one atomic ref transaction; false (nothing
   * changed) when either was elsewhere. A land request that arrives late, after a newer executor
   * moved the fence (moveFence, before it reads the base back), can therefore never apply.
   */
  abstract land(ref: string, newSha: string, expectedSha: string, fence: Fence): Promise<boolean>;
  /**
   * Points `fenceRef` at a new commit nobody else can hold (made here, a random message, the tree
   * of `treeFrom`'s head) and returns it. `onlyIfAbsent`: creates the fence only when it does not
   * exist yet, and otherwise returns what it points at.
   */
  abstract moveFence(fenceRef: string, treeFrom: string, onlyIfAbsent?: boolean): Promise<string>;
  /** `ancestor` is `descendant` or one of its ancestors. */
  abstract isAncestor(ancestor: string, descendant: string): Promise<boolean>;
  /** The commit exists in the repository. */
  abstract hasCommit(sha: string): Promise<boolean>;
  /** Deletes `ref`; a missing ref is not an error. */
  abstract deleteRef(ref: string): Promise<void>;
  /**
   * The paths `headSha` changes since its merge base with `baseSha` (what the PR changes; both
   * paths of a rename), or null when they cannot all be listed: more than MAX_CHANGED_PATHS (or
   * more than the provider lists), `headSha` not in the repository, no common history.
   */
  abstract changedPaths(baseSha: string, headSha: string): Promise<string[] | null>;
}

/** The most changed paths a PR's entry keeps; a PR that changes more has paths "not known" (every lane). */
export const MAX_CHANGED_PATHS = 3000;

/** `main` -> `refs/heads/main`; a full ref stays as it is. */
export function fullRef(ref: string): string {
  return ref.startsWith('refs/') ? ref : `refs/heads/${ref}`;
}

/**
 * Candidate commits carry a fixed identity and date, so that a candidate is a function of its
 * base and heads: building it twice (after a crash) gives the same commit id.
 */
const CANDIDATE_ENV = {
  GIT_AUTHOR_NAME: 'Merge Queue',
  GIT_AUTHOR_EMAIL: 'merge-queue@delivery-platform.invalid',
  GIT_AUTHOR_DATE: '1700000000 +0000',
  GIT_COMMITTER_NAME: 'Merge Queue',
  GIT_COMMITTER_EMAIL: 'merge-queue@delivery-platform.invalid',
  GIT_COMMITTER_DATE: '1700000000 +0000',
};

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/**
 * LOCAL_GIT: the `git` CLI (2.38+, for `merge-tree --write-tree`) on a bare repository whose
 * absolute path the code source holds in `url` (a plain path or a `file://` URL), run through the
 * one LocalGitRunner (minimal environment, no hooks, no global config, a timeout) that
 * LocalGitClient uses too.
 */
export class LocalMergeQueueGit extends MergeQueueGit {
  /**
   * `repository`: the code source's `url`, the bare repository's absolute path (or its file://
   * URL); `runner`: the server's (MergeQueueGits passes it, with GIT_LOCAL_TIMEOUT_MS).
   */
  constructor(
    private readonly repository: string,
    private readonly runner: LocalGitRunner,
  ) {
    super();
  }

  private git(args: string[], okCodes: number[] = [0], input?: string, env?: Record<string, string>): Promise<{ code: number; stdout: string }> {
    return this.runner.run(localPath(this.repository), args, { okCodes, input, env: { ...CANDIDATE_ENV, ...env } });
  }

  async readRef(ref: string): Promise<string | null> {
    const { code, stdout } = await this.git(['rev-parse', '--verify', '--quiet', `${fullRef(ref)}^{commit}`], [1]);
    return code === 0 ? stdout.trim() : null;
  }

  async hasCommit(sha: string): Promise<boolean> {
    if (!SHA.test(sha)) return false;
    const { code } = await this.git(['cat-file', '-e', `${sha}^{commit}`], [1, 128]);
    return code === 0;
  }

  /** The shas that are not commits of the repository, asked in one `git cat-file --batch-check` (one process per candidate, not per head). */
  private async missingCommits(shas: readonly string[]): Promise<Set<string>> {
    const missing = new Set(shas.filter((sha) => !SHA.test(sha)));
    const asked = shas.filter((sha) => SHA.test(sha));
    if (asked.length === 0) return missing;
    // One line per input, in order: the type for a commit, "<input> missing" when it is not one.
    const { stdout } = await this.git(['cat-file', '--batch-check=%(objecttype)'], [0], asked.map((sha) => `${sha}^{commit}\n`).join(''));
    const lines = stdout.split('\n');
    asked.forEach((sha, i) => {
      if (lines[i] !== 'commit') missing.add(sha);
    });
    return missing;
  }

  async buildCandidate(
    baseSha: string,
    heads: readonly CandidateHead[],
    _candidateRef?: string,
    options: { signal?: AbortSignal; method?: LandMethod } = {},
  ): Promise<CandidateResult> {
    const method = options.method ?? 'merge';
    let current = baseSha;
    const landed: LandedPr[] = [];
    const missing = await this.missingCommits(heads.map((h) => h.headSha));
    for (let i = 0; i < heads.length; i++) {
      options.signal?.throwIfAborted();
      const head = heads[i];
      if (missing.has(head.headSha)) {
        return { ok: false, conflictEntryId: head.entryId, reason: `#${head.number} head ${head.headSha} is not in the repository`, paths: [] };
      }
      // A head already contained in what is built so far (its commits arrived inside the base or
      // an earlier PR's history) adds no commit: the PR is merged by the land without an empty merge.
      if (await this.isAncestor(head.headSha, current)) {
        landed.push({ entryId: head.entryId, number: head.number, commits: [] });
        continue;
      }
      const merge = await this.mergeTree(current, head.headSha);
      if (!merge.clean) {
        const culprit = await this.firstConflictingPartner(baseSha, heads.slice(0, i), head);
        const where = merge.paths.length ? ` in ${merge.paths.join(', ')}` : '';
        return { ok: false, conflictEntryId: head.entryId, reason: `#${head.number} conflicts with ${culprit}${where}`, paths: merge.paths };
      }
      let commits: string[];
      if (method === 'merge') {
        commits = [await this.commitTree(merge.tree, [current, head.headSha], `Merge #${head.number} (${head.headSha.slice(0, 12)})`)];
      } else if (method === 'squash') {
        const prCommits = await this.prCommits(current, head.headSha);
        const author = squashAuthor(prCommits) ?? (await this.prCommits(current, head.headSha, true))[0].author;
        commits = [await this.commitTree(merge.tree, [current], squashMessage(head.number, head.title, prCommits, author), author)];
      } else {
        const replayed = await this.replay(current, await this.prCommits(current, head.headSha), options.signal);
        if (!replayed.ok) {
          const where = replayed.paths.length ? ` in ${replayed.paths.join(', ')}` : '';
          const { sha, message } = replayed.commit;
          return {
            ok: false,
            conflictEntryId: head.entryId,
            reason: `#${head.number} conflicts when rebased: its commit ${sha.slice(0, 12)} ("${subjectOf(message)}") does not apply${where}`,
            paths: replayed.paths,
          };
        }
        commits = replayed.commits;
      }
      current = commits.at(-1) ?? current;
      landed.push({ entryId: head.entryId, number: head.number, commits });
    }
    return { ok: true, candidateSha: current, landed };
  }

  /**
   * The commits `head` has that `onto` lacks, oldest first (`git log --reverse --topo-order`),
   * merge commits left out as `git rebase` leaves them out; `all`: the head commit alone.
   */
  private async prCommits(onto: string, head: string, all = false): Promise<PrCommit[]> {
    const range = all ? ['-1', head] : ['--reverse', '--topo-order', '--no-merges', `${onto}..${head}`];
    const { stdout } = await this.git(['log', '--date=raw', '--format=%H%x00%P%x00%an%x00%ae%x00%ad%x00%B%x1e', ...range, '--']);
    return stdout
      .split('\x1e')
      .map((record) => record.replace(/^\n/, ''))
      .filter(Boolean)
      .map((record) => {
        const [sha, parents, name, email, date, message] = record.split('\0');
        return { sha, parents: parents.split(' ').filter(Boolean), author: { name, email, date }, message: message.replace(/\n+$/, '') };
      });
  }

  /**
   * Replays `commits` onto `onto` as `git rebase` does: each commit's
   * change from its first parent, merged onto what is replayed so far, keeping its author and
   * message; a commit whose change is already there adds nothing. The three-way merge of a commit
   * uses its parent as the merge base, through a commit with the tree so far and that parent as
   * its only parent (git 2.38's `merge-tree --write-tree` takes no merge base of its own).
   */
  private async replay(
    onto: string,
    commits: readonly PrCommit[],
    signal?: AbortSignal,
  ): Promise<{ ok: true; commits: string[] } | { ok: false; commit: PrCommit; paths: string[] }> {
    let current = onto;
    let tree = (await this.git(['rev-parse', `${onto}^{tree}`])).stdout.trim();
    const made: string[] = [];
    for (const c of commits) {
      signal?.throwIfAborted();
      if (c.parents.length === 0) return { ok: false, commit: c, paths: [] };
      const probe = await this.commitTree(tree, [c.parents[0]], 'merge-queue replay probe');
      const picked = await this.mergeTree(probe, c.sha);
      if (!picked.clean) return { ok: false, commit: c, paths: picked.paths };
      if (picked.tree === tree) continue;
      current = await this.commitTree(picked.tree, [current], c.message, c.author);
      tree = picked.tree;
      made.push(current);
    }
    return { ok: true, commits: made };
  }

  /** `git commit-tree`: the queue's fixed identity and date, or `author` (its name, e-mail and date) as the author. */
  private async commitTree(tree: string, parents: readonly string[], message: string, author?: GitPerson): Promise<string> {
    const env = author ? { GIT_AUTHOR_NAME: author.name, GIT_AUTHOR_EMAIL: author.email, GIT_AUTHOR_DATE: author.date } : undefined;
    const { stdout } = await this.git(['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'], [0], `${message}\n`, env);
    return stdout.trim();
  }

  async publishRef(ref: string, sha: string): Promise<void> {
    await this.git(['update-ref', fullRef(ref), sha]);
  }

  /** One `git update-ref --stdin` transaction: every ref is locked, then all checked and moved, or none. */
  async land(ref: string, newSha: string, expectedSha: string, fence: Fence): Promise<boolean> {
    const input = `verify ${fullRef(fence.ref)} ${fence.sha}\nupdate ${fullRef(ref)} ${newSha} ${expectedSha}\n`;
    const { code } = await this.git(['update-ref', '--stdin'], [1, 128], input);
    return code === 0;
  }

  async moveFence(fenceRef: string, treeFrom: string, onlyIfAbsent = false): Promise<string> {
    const { stdout } = await this.git(['commit-tree', `${fullRef(treeFrom)}^{tree}`, '-m', `merge-queue fence ${randomUUID()}`]);
    const sha = stdout.trim();
    if (!onlyIfAbsent) {
      await this.git(['update-ref', fullRef(fenceRef), sha]);
      return sha;
    }
    // An empty old value: the ref must not exist.
    const { code } = await this.git(['update-ref', fullRef(fenceRef), sha, ''], [1, 128]);
    if (code === 0) return sha;
    const current = await this.readRef(fenceRef);
    if (current === null) throw new Error(`could not create the fence ${fenceRef}`);
    return current;
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    const { code } = await this.git(['merge-base', '--is-ancestor', ancestor, descendant], [1]);
    return code === 0;
  }

  async changedPaths(baseSha: string, headSha: string): Promise<string[] | null> {
    // Hex ids only (never read as an option); a head the repository lacks makes git exit 128: one process, not two.
    if (!SHA.test(baseSha) || !SHA.test(headSha)) return null;
    // Three dots: from the merge base, so what the base gained since the PR branched is not counted.
    let listed: { code: number; stdout: string };
    try {
      listed = await this.git(['diff', '--name-only', '--no-renames', '-z', `${baseSha}...${headSha}`], [128]);
    } catch (error) {
      // An output past the runner's limit (a huge PR) or a timeout: not known, the safe answer.
      if (error instanceof GitCommandError) return null;
      throw error;
    }
    if (listed.code !== 0) return null;
    const paths = listed.stdout.split('\0').filter(Boolean);
    return paths.length > MAX_CHANGED_PATHS ? null : paths;
  }

  async deleteRef(ref: string): Promise<void> {
    if ((await this.readRef(ref)) === null) return;
    await this.git(['update-ref', '-d', fullRef(ref)], [1]);
  }

  private async mergeTree(ours: string, theirs: string): Promise<{ clean: boolean; tree: string; paths: string[] }> {
    const { code, stdout } = await this.git(['merge-tree', '--write-tree', '--name-only', '--no-messages', ours, theirs], [1]);
    const lines = stdout.split('\n').filter(Boolean);
    return { clean: code === 0, tree: lines[0] ?? '', paths: code === 0 ? [] : [...new Set(lines.slice(1))] };
  }

  /** Which earlier PR of the candidate the head conflicts with, else the base (something landed meanwhile). */
  private async firstConflictingPartner(baseSha: string, earlier: readonly CandidateHead[], head: CandidateHead): Promise<string> {
    for (const other of earlier) {
      if (!(await this.mergeTree(other.headSha, head.headSha)).clean) return `#${other.number}`;
    }
    if (!(await this.mergeTree(baseSha, head.headSha)).clean) return `the base (${baseSha.slice(0, 12)})`;
    return earlier.length ? `#${earlier.map((e) => e.number).join(', #')} together` : 'the base';
  }
}

function localPath(repository: string): string {
  return repository.startsWith('file://') ? decodeURIComponent(new URL(repository).pathname) : repository;
}
