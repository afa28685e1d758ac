/**
 * The JSON shapes GitHub gives users, repositories, installations and apps, in full (every field
 * its REST and webhook descriptions require), shared by the REST answers and the webhook payloads.
 * The contract test (contract.spec.ts) holds them to GitHub's descriptions.
 */
import { lastCommitDate } from './bare-git';
import type { EmulatedInstallation, EmulatedRepository, EmulatorState } from './state';

const node = (kind: string, id: number | string) => Buffer.from(`${kind}:${id}`).toString('base64');

/** The emulator's GitHub App, as `integration` (the app of check runs and installations). */
export const EMULATOR_APP_ID = 1;

export class GithubJson {
  constructor(private readonly state: EmulatorState) {}

  private get base(): string {
    return this.state.url;
  }

  /** GitHub's `simple-user` of a login (a bot for `<slug>[bot]`). */
  user(login: string): Record<string, unknown> {
    const id = this.state.users.get(login)?.id ?? 0;
    const api = `${this.base}/users/${encodeURIComponent(login)}`;
    return {
      login,
      id,
      node_id: node(login.endsWith('[bot]') ? 'Bot' : 'User', id),
      avatar_url: `${this.base}/avatars/u/${id}?v=4`,
      gravatar_id: '',
      url: api,
      html_url: `${this.base}/${encodeURIComponent(login)}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: login.endsWith('[bot]') ? 'Bot' : 'User',
      user_view_type: 'public',
      site_admin: false,
    };
  }

  /** GET /user's public view (`public-user`). */
  publicUser(login: string): Record<string, unknown> {
    const created = '2020-01-01T00:00:00Z';
    return {
      ...this.user(login),
      name: login,
      company: null,
      blog: '',
      location: null,
      email: null,
      hireable: null,
      bio: null,
      twitter_username: null,
      public_repos: [...this.state.repos.values()].filter((r) => r.owner === login && !r.private).length,
      public_gists: 0,
      followers: 0,
      following: 0,
      created_at: created,
      updated_at: created,
    };
  }

  /** A collaborator: a `simple-user` with its permissions and role. */
  collaborator(repo: EmulatedRepository, login: string): Record<string, unknown> {
    const role = this.state.roleOf(repo, login);
    const rank = ['none', 'read', 'triage', 'write', 'maintain', 'admin'].indexOf(role);
    return {
      ...this.user(login),
      permissions: { admin: rank >= 5, maintain: rank >= 4, push: rank >= 3, triage: rank >= 2, pull: rank >= 1 },
      role_name: role,
    };
  }

  /** GET /repos/{owner}/{repo} (`full-repository`), also a webhook's `repository`. */
  repository(repo: EmulatedRepository): Record<string, unknown> {
    const full = `${repo.owner}/${repo.name}`;
    const api = `${this.base}/repos/${full}`;
    const html = `${this.base}/${full}`;
    const host = new URL(this.base).host;
    const pushedAt = lastCommitDate(repo.path);
    return {
      id: repo.id,
      node_id: node('Repository', repo.id),
      name: repo.name,
      full_name: full,
      private: repo.private,
      owner: this.user(repo.owner),
      html_url: html,
      description: repo.description,
      fork: false,
      url: api,
      forks_url: `${api}/forks`,
      keys_url: `${api}/keys{/key_id}`,
      collaborators_url: `${api}/collaborators{/collaborator}`,
      teams_url: `${api}/teams`,
      hooks_url: `${api}/hooks`,
      issue_events_url: `${api}/issues/events{/number}`,
      events_url: `${api}/events`,
      assignees_url: `${api}/assignees{/user}`,
      branches_url: `${api}/branches{/branch}`,
      tags_url: `${api}/tags`,
      blobs_url: `${api}/git/blobs{/sha}`,
      git_tags_url: `${api}/git/tags{/sha}`,
      git_refs_url: `${api}/git/refs{/sha}`,
      trees_url: `${api}/git/trees{/sha}`,
      statuses_url: `${api}/statuses/{sha}`,
      languages_url: `${api}/languages`,
      stargazers_url: `${api}/stargazers`,
      contributors_url: `${api}/contributors`,
      subscribers_url: `${api}/subscribers`,
      subscription_url: `${api}/subscription`,
      commits_url: `${api}/commits{/sha}`,
      git_commits_url: `${api}/git/commits{/sha}`,
      comments_url: `${api}/comments{/number}`,
      issue_comment_url: `${api}/issues/comments{/number}`,
      contents_url: `${api}/contents/{+path}`,
      compare_url: `${api}/compare/{base}...{head}`,
      merges_url: `${api}/merges`,
      archive_url: `${api}/{archive_format}{/ref}`,
      downloads_url: `${api}/downloads`,
      issues_url: `${api}/issues{/number}`,
      pulls_url: `${api}/pulls{/number}`,
      milestones_url: `${api}/milestones{/number}`,
      notifications_url: `${api}/notifications{?since,all,participating}`,
      labels_url: `${api}/labels{/name}`,
      releases_url: `${api}/releases{/id}`,
      deployments_url: `${api}/deployments`,
      created_at: pushedAt,
      updated_at: pushedAt,
      pushed_at: pushedAt,
      git_url: `git://${host}/${full}.git`,
      ssh_url: `git@${host}:${full}.git`,
      clone_url: `${html}.git`,
      svn_url: html,
      homepage: null,
      size: 0,
      stargazers_count: 0,
      watchers_count: 0,
      language: null,
      has_issues: true,
      has_projects: true,
      has_downloads: true,
      has_wiki: true,
      has_pages: false,
      has_discussions: false,
      forks_count: 0,
      mirror_url: null,
      archived: false,
      disabled: false,
      open_issues_count: 0,
      license: null,
      allow_forking: true,
      is_template: false,
      web_commit_signoff_required: false,
      topics: [],
      visibility: repo.private ? 'private' : 'public',
      forks: 0,
      open_issues: 0,
      watchers: 0,
      default_branch: repo.defaultBranch,
      network_count: 0,
      subscribers_count: 0,
    };
  }

  /** The account an installation is on: a user's `simple-user`, or an organization's (its id from its login). */
  private account(installation: EmulatedInstallation): Record<string, unknown> & { id: number } {
    const user = this.user(installation.account) as Record<string, unknown> & { id: number };
    if (installation.accountType !== 'Organization') return user;
    const id = organizationId(installation.account);
    return { ...user, id, node_id: node('Organization', id), type: 'Organization' };
  }

  /** An app installation (`installation`). */
  installation(installation: EmulatedInstallation): Record<string, unknown> {
    const created = '2024-01-01T00:00:00Z';
    return {
      id: installation.id,
      account: this.account(installation),
      repository_selection: installation.repositories ? 'selected' : 'all',
      access_tokens_url: `${this.base}/app/installations/${installation.id}/access_tokens`,
      repositories_url: `${this.base}/installation/repositories`,
      html_url: `${this.base}/settings/installations/${installation.id}`,
      app_id: EMULATOR_APP_ID,
      app_slug: this.state.appSlug,
      target_id: this.account(installation).id,
      target_type: installation.accountType,
      permissions: { checks: 'write', contents: 'write', issues: 'write', metadata: 'read', pull_requests: 'write', statuses: 'write' },
      events: ['check_run', 'check_suite', 'issue_comment', 'pull_request', 'push', 'status'],
      created_at: created,
      updated_at: created,
      single_file_name: null,
      has_multiple_single_files: false,
      single_file_paths: [],
      suspended_by: null,
      suspended_at: null,
    };
  }

  /** A repository's label (`label`); its id and colour derived from its name. */
  label(repository: string, name: string): Record<string, unknown> {
    let hash = 0;
    for (const c of `${repository.toLowerCase()}:${name}`) hash = (hash * 31 + c.charCodeAt(0)) % 1_000_000_000;
    const id = 3_000_000_000 + hash;
    return {
      id,
      node_id: node('Label', id),
      url: `${this.base}/repos/${repository}/labels/${encodeURIComponent(name)}`,
      name,
      description: null,
      color: (hash % 0xffffff).toString(16).padStart(6, '0'),
      default: false,
    };
  }

  /** The reactions rollup (`reaction-rollup`) of an issue or comment. */
  reactionRollup(url: string, reactions: readonly { content: string }[]): Record<string, unknown> {
    const count = (content: string) => reactions.filter((r) => r.content === content).length;
    return {
      url,
      total_count: reactions.length,
      '+1': count('+1'),
      '-1': count('-1'),
      laugh: count('laugh'),
      confused: count('confused'),
      heart: count('heart'),
      hooray: count('hooray'),
      eyes: count('eyes'),
      rocket: count('rocket'),
    };
  }

  /** A GitHub App (`integration`) by slug: the emulator's own app, or another one (a CI's). */
  app(slug: string, id: number): Record<string, unknown> {
    const created = '2024-01-01T00:00:00Z';
    return {
      id,
      slug,
      node_id: node('App', id),
      client_id: `Iv1.${slug}`,
      owner: this.user('github'),
      name: slug,
      description: null,
      external_url: `${this.base}/apps/${slug}`,
      html_url: `${this.base}/apps/${slug}`,
      created_at: created,
      updated_at: created,
      permissions: { checks: 'write', metadata: 'read' },
      events: [],
    };
  }
}

/** A stable id for an organization the emulator keeps no user for. */
export function organizationId(login: string): number {
  let hash = 0;
  for (const c of login.toLowerCase()) hash = (hash * 31 + c.charCodeAt(0)) % 1_000_000;
  return 5_000_000 + hash;
}
