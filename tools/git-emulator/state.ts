/**
 * The emulator's state: its users, tokens, repositories and installations, the knobs tests turn,
 * and the records tests read (requests, deliveries, ref moves, statuses). Every concern file
 * (REST, GraphQL, Actions, apps and OAuth, webhooks, GitLab) reads and writes this one object.
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBareRepository } from './bare-git';

export interface EmulatedUser {
  id: number;
  login: string;
}

export interface EmulatedRepository {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  description: string | null;
  defaultBranch: string;
  collaborators: string[];
  /**
   * Roles given to people (GitHub's repository roles); without one, the owner is admin, a
   * collaborator has write, anyone else read (public) or none (private). Write and above push.
   */
  roles: Record<string, RepositoryRole>;
  /** The bare repository on disk. */
  path: string;
  /** GitHub Actions history, newest run first (see addWorkflowRuns). */
  runs: EmulatedRun[];
}

export type RepositoryRole = 'read' | 'triage' | 'write' | 'maintain' | 'admin';

export interface EmulatedDelivery {
  id: string;
  event: string;
  body: string;
  signature: string;
  /** X-Hub-Signature (SHA-1), sent with the SHA-256 one when the emulator signed the delivery itself. */
  signatureSha1?: string;
  status: number;
  response: string;
}

export interface EmulatedJob {
  id: number;
  runId: number;
  runAttempt: number;
  name: string;
  labels: string[];
  conclusion: string;
  startedAt: string;
  completedAt: string;
}

export interface EmulatedRun {
  id: number;
  workflowId: number;
  name: string;
  event: string;
  runNumber: number;
  runAttempt: number;
  conclusion: string;
  createdAt: string;
  runStartedAt: string;
  updatedAt: string;
  jobs: EmulatedJob[];
}

export interface EmulatedInstallation {
  id: number;
  account: string;
  /** The kind of account it is installed on (GitHub's `target_type`). */
  accountType: 'User' | 'Organization';
  /** Logins of the users who may access it. */
  users: string[];
  /** The repositories it covers (`owner/name`, `repository_selection: selected`); undefined: all of the account's. */
  repositories?: string[];
}

/** A user's membership of an organization, as GET /user/memberships/orgs/{org} answers it. */
export interface EmulatedMembership {
  role: 'admin' | 'member' | 'billing_manager';
  state: 'active' | 'pending';
}

export interface Knobs {
  /** Every API call answers 503. */
  down: boolean;
  /** Every API call waits this long before answering. */
  delayMs: number;
  /** Every API call answers 403 with x-ratelimit-remaining: 0 and retry-after. */
  rateLimited: boolean;
  /**
   * Until this instant (epoch ms) the Actions endpoints answer `rateLimitStatus` (403 or 429) with
   * `retry-after` and `x-ratelimit-reset` saying when the limit resets (0: not limited).
   */
  actionsRateLimitedUntil: number;
  rateLimitStatus: 403 | 429;
  /** The next this-many Actions calls answer 502 (a transient provider failure). */
  actionsFailures: number;
  /** The next this-many git database, compare and merge calls answer `gitFailureStatus` (502 unless set). */
  gitFailures: number;
  /** The next this-many commit status posts answer 502. */
  statusFailures: number;
  /** The next this-many calls to a PR's conversation (issues.ts: the PR, comments, reactions, labels, permissions) answer 502. */
  conversationFailures: number;
  /** The status of those failures (502, 503...). */
  gitFailureStatus?: number;
  /** With those failures, a `Retry-After` header (seconds, or an HTTP date), as GitHub sends with some 503s. */
  gitFailureRetryAfter?: string;
  /**
   * Branches (`owner/repo:branch`, or `branch` for every repository) that refuse ref updates and
   * deletions as a GitHub branch protection rule does: 422 "Protected branch update failed for
   * refs/heads/<branch>." (the REST API's answer to PATCH/DELETE git/refs on such a branch).
   */
  protectedBranches: string[];
  /**
   * When set, a GraphQL `updateRefs` that arrives is held (its refs not yet looked at) until this
   * promise settles, and `heldUpdateRefs` counts it: a request delayed in flight, for fencing tests.
   */
  holdUpdateRefs: Promise<void> | null;
  heldUpdateRefs: number;
}

export class EmulatorState {
  readonly clientId = 'Iv1.emulatorclient';
  readonly clientSecret = 'emulator-client-secret';
  readonly appSlug = 'delivery-platform-demo';
  readonly knobs: Knobs = {
    down: false,
    delayMs: 0,
    rateLimited: false,
    actionsRateLimitedUntil: 0,
    rateLimitStatus: 403,
    actionsFailures: 0,
    gitFailures: 0,
    statusFailures: 0,
    conversationFailures: 0,
    protectedBranches: [],
    holdUpdateRefs: null,
    heldUpdateRefs: 0,
  };
  /** Where the app install and authorize pages send the browser back (the API's /scm/callback). */
  callbackUrl = '';
  /** The user the authorize/install pages act as (there is no login page). */
  browserUser = '';
  /** Every request, in order, with when it arrived (epoch ms). */
  readonly requests: { method: string; path: string; query: string; at: number }[] = [];
  /**
   * Where webhook deliveries go (the API's POST /webhooks/github) and the secret they are signed
   * with; unset, nothing is sent. `installationId` is put in every payload, as for a GitHub App.
   * `appSecret`: the GitHub App's one webhook secret; a delivery about a repository whose owner has
   * an installation then carries that installation's id and is signed with it, as GitHub sends an
   * App's deliveries (others keep `secret`).
   */
  webhook?: { url: string; secret: string; installationId?: number; appSecret?: string };
  /** Every delivery sent, in order, with the answer (redeliver() sends one again). */
  readonly deliveries: EmulatedDelivery[] = [];
  /**
   * The GitHub App whose JWTs the app endpoints accept (RS256, `iss` = appId, verified with its
   * public key). Unset: any Bearer value is accepted (the OAuth-only tests).
   */
  app?: { appId: string; publicKey: KeyObject };
  /** The installation tokens issued, with the installation each acts for. */
  readonly installationTokens: { token: string; installationId: number; expiresAt: string }[] = [];
  /** Every ref the API moved (PATCH or POST git/refs), with the credential that moved it. */
  readonly refMoves: { repository: string; ref: string; sha: string; by: string }[] = [];
  /** Called for every ref the API moves (after it is recorded), e.g. by a CI that starts on a pushed branch. */
  readonly refListeners: ((move: { repository: string; ref: string; before: string; after: string; by: string }) => void)[] = [];
  /** Commit statuses posted (POST /repos/{o}/{r}/statuses/{sha}), with the credential that posted them. */
  readonly statuses: { repository: string; sha: string; state: string; context: string; description?: string; targetUrl?: string; by: string }[] = [];

  /** @internal The emulator's own records, shared by its concern files. */
  readonly users = new Map<string, EmulatedUser>();
  /** @internal Token → login (personal, OAuth and installation tokens alike). */
  readonly tokens = new Map<string, string>();
  /** @internal OAuth codes the authorize page handed out. */
  readonly codes = new Map<string, { login: string; used: boolean }>();
  /** @internal Repositories by lower-cased `owner/name`. */
  readonly repos = new Map<string, EmulatedRepository>();
  /** @internal */
  readonly installations = new Map<number, EmulatedInstallation>();
  /** @internal Organization login (lower case) → member login → membership. */
  readonly memberships = new Map<string, Map<string, EmulatedMembership>>();
  /** @internal The directory holding the bare repositories. */
  readonly root = mkdtempSync(join(tmpdir(), 'git-emulator-'));
  /** @internal */
  server?: Server;
  private lastId = 999;

  get url(): string {
    const address = this.server?.address() as AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  /** @internal The next id (users, repositories, runs, check runs... share one sequence). */
  nextId(): number {
    return ++this.lastId;
  }

  addUser(login: string): { user: EmulatedUser; token: string } {
    const user = this.users.get(login) ?? { id: this.nextId(), login };
    this.users.set(login, user);
    return { user, token: this.issueToken(login) };
  }

  issueToken(login: string): string {
    const token = `ghp_${randomBytes(18).toString('base64url')}`;
    this.tokens.set(token, login);
    return token;
  }

  revokeToken(token: string): void {
    this.tokens.delete(token);
  }

  /** A repository backed by a real bare git repository with one commit on its default branch. */
  addRepository(
    owner: string,
    name: string,
    options: Partial<Pick<EmulatedRepository, 'private' | 'description' | 'defaultBranch' | 'collaborators'>> = {},
  ): EmulatedRepository {
    const path = join(this.root, owner, `${name}.git`);
    mkdirSync(path, { recursive: true });
    const repo: EmulatedRepository = {
      id: this.nextId(),
      owner,
      name,
      private: options.private ?? false,
      description: options.description ?? null,
      defaultBranch: options.defaultBranch ?? 'main',
      collaborators: options.collaborators ?? [owner],
      roles: {},
      path,
      runs: [],
    };
    initBareRepository(path, repo.defaultBranch, repo.description ?? undefined);
    this.repos.set(`${owner}/${name}`.toLowerCase(), repo);
    return repo;
  }

  /**
   * Renames a repository, or transfers it to `newOwner`: the same id and git data under the new
   * `owner/name`; the old name is gone (GitHub's redirect of the old name is not emulated, so a
   * client still using it gets a 404).
   */
  renameRepository(owner: string, name: string, newName: string, newOwner = owner): EmulatedRepository {
    const repo = this.repos.get(`${owner}/${name}`.toLowerCase());
    if (!repo) throw new Error(`no repository ${owner}/${name}`);
    this.repos.delete(`${owner}/${name}`.toLowerCase());
    repo.owner = newOwner;
    repo.name = newName;
    this.repos.set(`${newOwner}/${newName}`.toLowerCase(), repo);
    return repo;
  }

  /** @internal A repository by owner and name (URL-encoded or not), case-insensitively. */
  repository(owner: string, name: string): EmulatedRepository | undefined {
    return this.repos.get(`${decodeURIComponent(owner)}/${decodeURIComponent(name)}`.toLowerCase());
  }

  /** @internal Whether `login` can see `repo` (a private one only as a collaborator; else it is a 404, as on GitHub). */
  canSee(repo: EmulatedRepository | undefined, login: string): repo is EmulatedRepository {
    return !!repo && (!repo.private || repo.collaborators.includes(login));
  }

  /** @internal `login`'s role on `repo` ('none': no access), as GET .../collaborators/{username}/permission answers it. */
  roleOf(repo: EmulatedRepository, login: string): RepositoryRole | 'none' {
    if (repo.roles[login]) return repo.roles[login];
    if (login === repo.owner) return 'admin';
    if (repo.collaborators.includes(login)) return 'write';
    return repo.private ? 'none' : 'read';
  }

  /** Gives `login` a role on the repository (`owner/name`): write, maintain and admin push (a collaborator), read and triage do not. */
  setRole(repository: string, login: string, role: RepositoryRole): void {
    const repo = this.repos.get(repository.toLowerCase());
    if (!repo) throw new Error(`no repository ${repository}`);
    repo.roles[login] = role;
    const pushes = role === 'write' || role === 'maintain' || role === 'admin';
    repo.collaborators = pushes ? [...new Set([...repo.collaborators, login])] : repo.collaborators.filter((c) => c !== login);
  }

  /** @internal Whether a branch refuses updates (knobs.protectedBranches). */
  isProtected(fullName: string, branch: string): boolean {
    return this.knobs.protectedBranches.some((p) => p === branch || p.toLowerCase() === `${fullName}:${branch}`.toLowerCase());
  }
}
