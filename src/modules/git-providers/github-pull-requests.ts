import type { Octokit } from '@octokit/rest';
import { ProviderFailure } from './git-provider.port';
import { call } from './github.provider';

/** A pull request as GitHub answers GET /repos/{owner}/{repo}/pulls/{pull_number}, the fields the queue reads. */
export interface GitHubPull {
  number: number;
  title: string;
  state: 'open' | 'closed';
  draft: boolean;
  merged: boolean;
  baseRef: string;
  headSha: string;
  htmlUrl: string;
}

/** GitHub's roles that may push to a repository (`role_name`), and the legacy `permission` values that mean it. */
const WRITE_ROLES = ['admin', 'maintain', 'write'];
const WRITE_PERMISSIONS = ['admin', 'write'];

/** A person's permission on the repository, as GitHub answers GET /repos/{owner}/{repo}/collaborators/{username}/permission. */
export interface GitHubPermission {
  /** GitHub's legacy `permission` (admin, write, read, none; maintain is reported as write, triage as read). */
  permission: string;
  /** The role (admin, maintain, write, triage, read, or a custom role's name). */
  roleName: string | null;
  /** May push: a write, maintain or admin role (a custom role based on write reports `permission` write). */
  canWrite: boolean;
}

/**
 * The conversation on a repository's pull requests through the REST API with the integration's
 * token: a PR as it is now, a person's permission, a comment on the PR and a reaction to a comment.
 * Provider failures propagate as ProviderFailure.
 */
export class GitHubPullRequests {
  private readonly repo: { owner: string; repo: string };

  /** `nameWithOwner`: the code source's `owner/name`. */
  constructor(
    private readonly api: Octokit,
    nameWithOwner: string,
  ) {
    const [owner, repo] = nameWithOwner.split('/');
    this.repo = { owner, repo };
  }

  /** PR `number` as GitHub has it now; null when there is none. */
  async pull(number: number): Promise<GitHubPull | null> {
    try {
      const { data } = await call(() => this.api.rest.pulls.get({ ...this.repo, pull_number: number }));
      return {
        number: data.number,
        title: data.title,
        state: data.state === 'closed' ? 'closed' : 'open',
        draft: data.draft === true,
        merged: data.merged === true,
        baseRef: data.base.ref,
        headSha: data.head.sha,
        htmlUrl: data.html_url,
      };
    } catch (error) {
      if (error instanceof ProviderFailure && error.kind === 'not_found') return null;
      throw error;
    }
  }

  /** `login`'s permission on the repository; a person GitHub does not know has none. */
  async permission(login: string): Promise<GitHubPermission> {
    try {
      const { data } = await call(() => this.api.rest.repos.getCollaboratorPermissionLevel({ ...this.repo, username: login }));
      const roleName = typeof data.role_name === 'string' ? data.role_name : null;
      return {
        permission: data.permission,
        roleName,
        canWrite: WRITE_PERMISSIONS.includes(data.permission) || (roleName !== null && WRITE_ROLES.includes(roleName)),
      };
    } catch (error) {
      if (error instanceof ProviderFailure && error.kind === 'not_found') return { permission: 'none', roleName: null, canWrite: false };
      throw error;
    }
  }

  /** A comment on PR `number` (the issue comment GitHub shows in the conversation). */
  async comment(number: number, body: string): Promise<void> {
    await call(() => this.api.rest.issues.createComment({ ...this.repo, issue_number: number, body }));
  }

  /** A reaction to a comment on a PR (GitHub answers 200 for one already given: asking twice leaves one). */
  async react(commentId: number, content: '+1' | 'eyes' | 'rocket' | 'confused'): Promise<void> {
    await call(() => this.api.rest.reactions.createForIssueComment({ ...this.repo, comment_id: commentId, content }));
  }
}
