/**
 * GitHub Actions: a repository's workflow runs and their jobs (GET actions/runs and
 * actions/runs/{id}/jobs), with the history tests seed through addWorkflowRuns.
 */
import { GithubJson } from './github-json';
import { fail, iso, paginate, type Route, type RouteContext, send } from './http';
import type { EmulatedJob, EmulatedRepository, EmulatedRun, EmulatorState } from './state';

export class Actions {
  readonly routes: Route[] = [
    { method: 'GET', path: /^\/repos\/([^/]+)\/([^/]+)\/actions\/runs(?:\/(\d+)\/jobs)?$/, auth: 'user', handle: (ctx, m) => this.runs(ctx, m) },
  ];

  private readonly json: GithubJson;

  constructor(private readonly state: EmulatorState) {
    this.json = new GithubJson(state);
  }

  /** A `minimal-repository`: the full one without what only GET /repos/{o}/{r} carries. */
  private minimalRepository(repo: EmulatedRepository): object {
    const { network_count: _n, subscribers_count: _s, ...minimal } = this.json.repository(repo);
    return minimal;
  }

  /**
   * Adds `count` workflow runs of `jobsPerRun` jobs each to a repository, deterministic for a seed:
   * runs spread over the `days` before `end` (newest first, as GitHub lists them), a few workflows,
   * jobs of 20 s to 15 min on ubuntu (most), windows, macos and self-hosted runners, and every
   * tenth run re-run once (its jobs are listed under both attempts). Returns the runs added.
   */
  addWorkflowRuns(owner: string, name: string, options: { count: number; jobsPerRun?: number; seed?: number; end?: Date; days?: number }): EmulatedRun[] {
    const repo = this.state.repos.get(`${owner}/${name}`.toLowerCase());
    if (!repo) throw new Error(`no repository ${owner}/${name}`);
    let state = (options.seed ?? 1) >>> 0 || 1;
    const random = () => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) / 4294967296;
    };
    const end = (options.end ?? new Date()).getTime();
    const span = (options.days ?? 30) * 86_400_000;
    const workflows = [
      { id: 161335, name: 'CI' },
      { id: 161336, name: 'Deploy' },
      { id: 161337, name: 'Nightly' },
      { id: 161338, name: 'Lint' },
    ];
    const runners = [['ubuntu-latest'], ['ubuntu-latest'], ['ubuntu-latest'], ['ubuntu-22.04'], ['windows-latest'], ['macos-14'], ['self-hosted', 'linux']];
    const added: EmulatedRun[] = [];
    const base = repo.runs.length;
    for (let i = 0; i < options.count; i++) {
      const created = end - Math.floor(((i + 1) / (options.count + 1)) * span);
      const workflow = workflows[Math.floor(random() * workflows.length)];
      const runAttempt = i % 10 === 9 ? 2 : 1;
      const run: EmulatedRun = {
        id: 9_000_000_000 + this.state.nextId(),
        workflowId: workflow.id,
        name: workflow.name,
        event: random() < 0.7 ? 'push' : 'pull_request',
        runNumber: base + options.count - i,
        runAttempt,
        conclusion: random() < 0.9 ? 'success' : 'failure',
        createdAt: iso(created),
        runStartedAt: iso(created + 2_000),
        updatedAt: iso(created),
        jobs: [],
      };
      let last = created;
      for (let attempt = 1; attempt <= runAttempt; attempt++) {
        for (let j = 0; j < (options.jobsPerRun ?? 5); j++) {
          const started = created + 5_000 + (attempt - 1) * 1_200_000 + Math.floor(random() * 60_000);
          const completed = started + 20_000 + Math.floor(random() * 880_000);
          last = Math.max(last, completed);
          run.jobs.push({
            id: 30_000_000_000 + this.state.nextId(),
            runId: run.id,
            runAttempt: attempt,
            name: `job-${j + 1}`,
            labels: runners[Math.floor(random() * runners.length)],
            conclusion: run.conclusion,
            startedAt: iso(started),
            completedAt: iso(completed),
          });
        }
      }
      run.updatedAt = iso(last);
      added.push(run);
    }
    repo.runs.push(...added);
    repo.runs.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id - a.id);
    return added;
  }

  workflowRuns(owner: string, name: string): EmulatedRun[] {
    return this.state.repos.get(`${owner}/${name}`.toLowerCase())?.runs ?? [];
  }

  /** Requests for one page of a repository's workflow runs, by page number. */
  runPageRequests(owner: string, name: string): number[] {
    const path = `/repos/${owner}/${name}/actions/runs`.toLowerCase();
    return this.state.requests.filter((r) => r.path.toLowerCase() === path).map((r) => Number(new URLSearchParams(r.query).get('page') ?? 1));
  }

  /** GET /repos/{owner}/{repo}/actions/runs and GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs (filter=latest|all). */
  private runs({ login, url, res }: RouteContext, match: RegExpMatchArray): void {
    const now = Date.now();
    if (this.state.knobs.actionsRateLimitedUntil > now) {
      res.setHeader('x-ratelimit-remaining', '0');
      res.setHeader('x-ratelimit-reset', String(Math.ceil(this.state.knobs.actionsRateLimitedUntil / 1000)));
      res.setHeader('retry-after', String(Math.ceil((this.state.knobs.actionsRateLimitedUntil - now) / 1000)));
      return send(res, this.state.knobs.rateLimitStatus, {
        message: 'API rate limit exceeded',
        documentation_url: 'https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting',
      });
    }
    if (this.state.knobs.actionsFailures > 0) {
      this.state.knobs.actionsFailures--;
      return fail(res, 502, 'Server Error');
    }
    const repo = this.state.repository(match[1], match[2]);
    if (!this.state.canSee(repo, login)) return fail(res, 404, 'Not Found');
    const owner = this.json.user(repo.owner);
    if (!match[3]) {
      const page = paginate(repo.runs, url, res);
      return send(res, 200, {
        total_count: repo.runs.length,
        workflow_runs: page.map((run) => runJson(run, repo, owner, this.minimalRepository(repo), this.state.url)),
      });
    }
    const run = repo.runs.find((r) => r.id === Number(match[3]));
    if (!run) return fail(res, 404, 'Not Found');
    const jobs = url.searchParams.get('filter') === 'all' ? run.jobs : run.jobs.filter((j) => j.runAttempt === run.runAttempt);
    return send(res, 200, { total_count: jobs.length, jobs: paginate(jobs, url, res).map((job) => jobJson(job, run, repo, this.state.url)) });
  }
}

function runJson(run: EmulatedRun, repo: EmulatedRepository, owner: object, minimal: object, base: string): object {
  return {
    id: run.id,
    name: run.name,
    node_id: Buffer.from(`WorkflowRun:${run.id}`).toString('base64'),
    head_branch: repo.defaultBranch,
    head_sha: run.id.toString(16).padStart(40, '0'),
    path: `.github/workflows/${run.name.toLowerCase()}.yml`,
    display_title: `${run.name} #${run.runNumber}`,
    run_number: run.runNumber,
    event: run.event,
    status: 'completed',
    conclusion: run.conclusion,
    workflow_id: run.workflowId,
    url: `${base}/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}`,
    html_url: `${base}/${repo.owner}/${repo.name}/actions/runs/${run.id}`,
    jobs_url: `${base}/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}/jobs`,
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    run_attempt: run.runAttempt,
    run_started_at: run.runStartedAt,
    actor: owner,
    triggering_actor: owner,
    logs_url: `${base}/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}/logs`,
    check_suite_url: `${base}/repos/${repo.owner}/${repo.name}/check-suites/${run.id + 1}`,
    cancel_url: `${base}/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}/cancel`,
    rerun_url: `${base}/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}/rerun`,
    artifacts_url: `${base}/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}/artifacts`,
    workflow_url: `${base}/repos/${repo.owner}/${repo.name}/actions/workflows/${run.workflowId}`,
    pull_requests: [],
    head_commit: null,
    repository: minimal,
    head_repository: minimal,
  };
}

function jobJson(job: EmulatedJob, run: EmulatedRun, repo: EmulatedRepository, base: string): object {
  const selfHosted = job.labels.includes('self-hosted');
  return {
    id: job.id,
    run_id: run.id,
    run_url: `${base}/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}`,
    run_attempt: job.runAttempt,
    node_id: Buffer.from(`CheckRun:${job.id}`).toString('base64'),
    head_sha: run.id.toString(16).padStart(40, '0'),
    url: `${base}/repos/${repo.owner}/${repo.name}/actions/jobs/${job.id}`,
    html_url: `${base}/${repo.owner}/${repo.name}/actions/runs/${run.id}/job/${job.id}`,
    status: 'completed',
    conclusion: job.conclusion,
    created_at: job.startedAt,
    started_at: job.startedAt,
    completed_at: job.completedAt,
    name: job.name,
    workflow_name: run.name,
    head_branch: repo.defaultBranch,
    labels: job.labels,
    runner_id: selfHosted ? 7 : 1,
    runner_name: selfHosted ? 'build-box-1' : 'GitHub Actions 1',
    runner_group_id: selfHosted ? 2 : 1,
    runner_group_name: selfHosted ? 'Default' : 'GitHub Actions',
    check_run_url: `${base}/repos/${repo.owner}/${repo.name}/check-runs/${job.id}`,
    steps: [],
  };
}
