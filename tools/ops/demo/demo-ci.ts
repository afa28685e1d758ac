/**
 * The demo's CI: the emulator acting as GitHub Actions on the demo repository. When a branch under
 * `refs/heads/mq/` (a merge queue's candidate) is pushed, it starts a check run `ci` (GitHub sends
 * `check_run` created, in progress), "runs the tests" for `durationMs`, and completes it: failure
 * when a file of the candidate holds the demo's break marker, else success (`check_run` completed).
 * Each event reaches the API as GitHub delivers it: POST /webhooks/github, signed.
 */
import { execFile } from 'node:child_process';
import type { GitProviderEmulator } from '@tools/git-emulator/emulator';

/** A file holding this line breaks the demo's build. */
export const DEMO_CI_BREAKS = 'demo-ci: this line breaks the build';

/** The files of `sha` in the bare repository at `path` that hold the break marker. */
function brokenFiles(path: string, sha: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    execFile('git', ['--git-dir', path, 'grep', '-l', '-F', DEMO_CI_BREAKS, sha, '--'], (error, stdout) => {
      // git grep exits 1 when nothing matches.
      if (error && error.code !== 1) return reject(error);
      resolve(
        stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => line.slice(sha.length + 1)),
      );
    }),
  );
}

export interface DemoCiRun {
  sha: string;
  ref: string;
  conclusion?: 'success' | 'failure';
}

export class DemoCi {
  /** Every run, in the order they started (what the tests and the progress lines read). */
  readonly runs: DemoCiRun[] = [];
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly provider: GitProviderEmulator,
    private readonly repository: { owner: string; name: string; path: string },
    private readonly options: { durationMs: number; checkName?: string; onError?: (error: unknown) => void },
  ) {}

  /** Watches the repository's candidate branches until stop(). */
  start(): this {
    const fullName = `${this.repository.owner}/${this.repository.name}`.toLowerCase();
    this.provider.refListeners.push((move) => {
      if (this.stopped || move.repository.toLowerCase() !== fullName || !move.ref.startsWith('refs/heads/mq/') || /^0+$/.test(move.after)) return;
      this.run(move.ref, move.after).catch((error: unknown) => this.options.onError?.(error));
    });
    return this;
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
  }

  private async run(ref: string, sha: string): Promise<void> {
    const fullName = `${this.repository.owner}/${this.repository.name}`;
    const name = this.options.checkName ?? 'ci';
    const app = { id: 15368, slug: 'github-actions' };
    const record: DemoCiRun = { sha, ref };
    this.runs.push(record);
    const detailsUrl = `${this.provider.url}/${fullName}/actions/runs/${this.runs.length}`;
    const started = await this.provider.checkRun(fullName, sha, name, {
      app,
      detailsUrl,
      output: { title: 'Running the tests', summary: `The demo CI is testing ${sha.slice(0, 12)}` },
    });
    const run = JSON.parse(started.body) as { check_run: { id: number; started_at: string } };
    await new Promise<void>((done) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        done();
      }, this.options.durationMs);
      this.timers.add(timer);
    });
    if (this.stopped) return;
    const broken = await brokenFiles(this.repository.path, sha);
    record.conclusion = broken.length ? 'failure' : 'success';
    await this.provider.checkRun(fullName, sha, name, {
      app,
      detailsUrl,
      id: run.check_run.id,
      startedAt: run.check_run.started_at,
      conclusion: record.conclusion,
      output: broken.length
        ? { title: 'Tests failed', summary: `${broken.join(', ')}: ${DEMO_CI_BREAKS}` }
        : { title: 'Tests passed', summary: `All tests passed on ${sha.slice(0, 12)}` },
    });
  }
}
