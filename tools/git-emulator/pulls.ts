/**
 * Pull requests: each PR's head (set by the `pull_request` webhooks the emulator sends), its title,
 * state, draft flag, base, author, labels and conversation (comments and their reactions), served by
 * REST (issues.ts); and the reviews given on it, with GitHub's `reviewDecision` from them, served by
 * GraphQL's `repository { pullRequest(number) { reviewDecision headRefOid } }`.
 *
 * The review rule modelled is branch protection's "require a pull request review before merging":
 * the latest review of each collaborator counts; any CHANGES_REQUESTED is CHANGES_REQUESTED, else an
 * APPROVED is APPROVED, else REVIEW_REQUIRED. With the repository's `dismissStaleReviews` (GitHub's
 * "Dismiss stale pull request approvals when new commits are pushed"), only reviews of the current
 * head count. Without a review rule (`reviewsRequired: false`) the decision is null, as on GitHub.
 */
import type { EmulatedRepository, EmulatorState } from './state';

export type ReviewState = 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';

export interface EmulatedComment {
  id: number;
  by: string;
  body: string;
  at: string;
  reactions: { id: number; content: string; by: string; at: string }[];
}

export interface EmulatedPull {
  number: number;
  headSha: string;
  reviews: { by: string; state: ReviewState; commitId: string }[];
  title: string;
  state: 'open' | 'closed';
  merged: boolean;
  draft: boolean;
  baseRef: string;
  /** The PR's author (its `user`); the repository's owner unless told. */
  author?: string;
  labels: string[];
  comments: EmulatedComment[];
  createdAt: string;
  updatedAt: string;
}

/** What a test may set of a PR (EmulatorState.openPullRequest). */
export type PullFields = Partial<Pick<EmulatedPull, 'title' | 'state' | 'draft' | 'baseRef' | 'author' | 'merged'>>;

/** The review rules of a repository the emulator models (GitHub's defaults: a review required, stale approvals kept). */
export interface ReviewRules {
  reviewsRequired: boolean;
  dismissStaleReviews: boolean;
}

export class Pulls {
  private readonly pulls = new Map<string, EmulatedPull>();
  private readonly rules = new Map<string, ReviewRules>();

  constructor(private readonly state: EmulatorState) {}

  /** The PR `number` of `repository` (`owner/name`), made with `headSha` when new. */
  pull(repository: string, number: number, headSha?: string): EmulatedPull {
    const key = `${repository.toLowerCase()}#${number}`;
    let pull = this.pulls.get(key);
    if (!pull) {
      const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      pull = {
        number,
        headSha: headSha ?? '',
        reviews: [],
        title: `Pull request #${number}`,
        state: 'open',
        merged: false,
        draft: false,
        baseRef: 'main',
        labels: [],
        comments: [],
        createdAt: now,
        updatedAt: now,
      };
      this.pulls.set(key, pull);
    }
    return pull;
  }

  /** Sets what a test says of PR `number` (its title, state, draft flag, base, author). */
  update(repository: string, number: number, fields: PullFields & { headSha?: string }): EmulatedPull {
    const pull = this.pull(repository, number, fields.headSha);
    Object.assign(pull, Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)));
    pull.updatedAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    return pull;
  }

  /** A comment on any PR of `repository`, by id. */
  comment(repository: string, id: number): EmulatedComment | undefined {
    const prefix = `${repository.toLowerCase()}#`;
    for (const [key, pull] of this.pulls) if (key.startsWith(prefix)) for (const c of pull.comments) if (c.id === id) return c;
    return undefined;
  }

  /** The PR of `repository` if the emulator knows it. */
  known(repository: string, number: number): EmulatedPull | undefined {
    return this.pulls.get(`${repository.toLowerCase()}#${number}`);
  }

  /** The PR's title, or undefined when the emulator has no such PR. */
  titleOf(repository: string, number: number): string | undefined {
    return this.pulls.get(`${repository.toLowerCase()}#${number}`)?.title;
  }

  /** A push to the PR's head branch: its head moves (the `synchronize` webhook follows). */
  headMoved(repository: string, number: number, headSha: string): void {
    this.pull(repository, number, headSha).headSha = headSha;
  }

  /** `login` reviews the PR (on `commitId`, by default its current head). */
  review(repository: string, number: number, login: string, state: ReviewState, commitId?: string): void {
    const pull = this.pull(repository, number);
    pull.reviews.push({ by: login, state, commitId: commitId ?? pull.headSha });
  }

  setRules(repository: string, rules: Partial<ReviewRules>): void {
    this.rules.set(repository.toLowerCase(), { ...this.rulesOf(repository), ...rules });
  }

  /** GitHub's `reviewDecision` on the PR now. */
  reviewDecision(repo: EmulatedRepository, pull: EmulatedPull): 'APPROVED' | 'CHANGES_REQUESTED' | 'REVIEW_REQUIRED' | null {
    const rules = this.rulesOf(`${repo.owner}/${repo.name}`);
    if (!rules.reviewsRequired) return null;
    const latest = new Map<string, ReviewState>();
    for (const r of pull.reviews) {
      if (r.state === 'COMMENTED' || !repo.collaborators.includes(r.by)) continue;
      if (rules.dismissStaleReviews && r.commitId !== pull.headSha) continue;
      latest.set(r.by, r.state);
    }
    const states = [...latest.values()];
    if (states.includes('CHANGES_REQUESTED')) return 'CHANGES_REQUESTED';
    return states.includes('APPROVED') ? 'APPROVED' : 'REVIEW_REQUIRED';
  }

  /** The PR of a repository `login` can see, or undefined (GitHub's NOT_FOUND). */
  find(repo: EmulatedRepository, login: string, number: number): EmulatedPull | undefined {
    if (!this.state.canSee(repo, login)) return undefined;
    return this.pulls.get(`${repo.owner}/${repo.name}#${number}`.toLowerCase());
  }

  private rulesOf(repository: string): ReviewRules {
    return this.rules.get(repository.toLowerCase()) ?? { reviewsRequired: true, dismissStaleReviews: false };
  }
}
