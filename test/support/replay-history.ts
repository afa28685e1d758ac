import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mulberry32 } from '../bench/merge-queue/prng';
import { git } from './git-repos';

/**
 * The merge-queue replay (issue 19): a public repository's first-parent history, reduced to which
 * lines of which files each change touched (test/fixtures/merge-queue-replay/replay.json, made by
 * derive.mjs there), rebuilt in a bare repository as PR branches that fork 0-6 PRs behind main,
 * as real PR branches do, with a few extra PRs that make CI fail.
 */

/** [path, oldStart, oldCount, newLines] as `git diff --unified=0` numbers them; newLines: 6 hex digits per line. */
type Hunk = [string, number, number, string];
interface Fixture {
  source: string;
  firstParentRange: string;
  initial: Record<string, number>;
  prs: { commit: string; number: number | null; hunks: Hunk[]; deleted: string[] }[];
}

export function loadReplayFixture(): Fixture {
  return JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'merge-queue-replay', 'replay.json'), 'utf8')) as Fixture;
}

/** One PR of the replay, in queue order. */
export interface ReplayPr {
  number: number;
  headSha: string;
  /** CI fails on any candidate that holds it (it adds a `ci-fail-<n>.txt`). */
  bad: boolean;
  /** How many good PRs behind main its branch forked. */
  behind: number;
}

export interface ReplayHistory {
  /** The first commit of main: every file as it was before the range. */
  initial: string;
  prs: ReplayPr[];
  /**
   * The oracle: git's own sequential merge (merge-tree, ort) of the good branches in queue order,
   * starting at `initial`. oracle[k] is main after the k-th good PR; oracleTrees[k] its tree.
   */
  oracle: string[];
  oracleTrees: string[];
}

const ENV = {
  GIT_AUTHOR_NAME: 'Replay',
  GIT_AUTHOR_EMAIL: 'replay@example.test',
  GIT_AUTHOR_DATE: '1700000000 +0000',
  GIT_COMMITTER_NAME: 'Replay',
  GIT_COMMITTER_EMAIL: 'replay@example.test',
  GIT_COMMITTER_DATE: '1700000000 +0000',
};

function run(repo: string, args: string[], input?: string): string {
  return execFileSync('git', ['--git-dir', repo, ...args], { input, encoding: 'utf8', env: { ...process.env, ...ENV }, maxBuffer: 64 << 20 }).trim();
}

/** Clean merge-tree result (the tree), or null on a conflict. */
function mergeTree(repo: string, args: string[]): string | null {
  try {
    return run(repo, ['merge-tree', '--write-tree', '--no-messages', ...args]).split('\n')[0];
  } catch {
    return null;
  }
}

/** The line contents of each file, as the fixture's changes leave them. */
function applyChange(files: Map<string, string[]>, change: Fixture['prs'][number]): void {
  const byFile = new Map<string, Hunk[]>();
  for (const h of change.hunks) byFile.set(h[0], [...(byFile.get(h[0]) ?? []), h]);
  for (const [path, hunks] of byFile) {
    const lines = files.get(path) ?? [];
    // Later hunks first, so earlier line numbers stay valid.
    for (const [, start, count, added] of [...hunks].sort((a, b) => b[1] - a[1])) {
      const fresh = added.match(/.{6}/g) ?? [];
      if (count === 0) lines.splice(start, 0, ...fresh);
      else lines.splice(start - 1, count, ...fresh);
    }
    files.set(path, lines);
  }
  for (const path of change.deleted) files.delete(path);
}

/**
 * Writes the fixture's real history as a chain of commits (one `git fast-import`), then builds,
 * in queue order, each good PR's branch (its change cherry-picked by merge-tree onto main as it
 * was `behind` PRs ago; fewer when that does not apply cleanly, as its author would have rebased)
 * and each bad PR's branch, and main's oracle states.
 */
export function buildReplayHistory(repo: string, options: { seed: number; bad: number[]; maxBehind: number }): ReplayHistory {
  const fixture = loadReplayFixture();
  const files = new Map<string, string[]>();
  for (const [path, count] of Object.entries(fixture.initial)) {
    if (count > 0)
      files.set(
        path,
        Array.from({ length: count }, (_, i) => `${path} line ${i + 1}`),
      );
  }
  let stream = '';
  const blob = (lines: string[]) => {
    const text = lines.length ? `${lines.join('\n')}\n` : '';
    return `data ${Buffer.byteLength(text)}\n${text}\n`;
  };
  const snapshot = (mark: number, parent: number | null, message: string, paths: Iterable<string>) => {
    stream += `commit refs/replay/real\nmark :${mark}\ncommitter Replay <replay@example.test> 1700000000 +0000\ndata ${message.length}\n${message}\n`;
    if (parent !== null) stream += `from :${parent}\n`;
    for (const path of paths) {
      const lines = files.get(path);
      stream += lines ? `M 100644 inline ${path}\n${blob(lines)}` : `D ${path}\n`;
    }
  };
  snapshot(1, null, 'replay: before the range', [...files.keys()].sort());
  fixture.prs.forEach((change, i) => {
    applyChange(files, change);
    snapshot(i + 2, i + 1, `replay: change ${i + 1}`, new Set([...change.hunks.map((h) => h[0]), ...change.deleted]));
  });
  const marksFile = join(repo, 'replay-marks');
  run(repo, ['fast-import', '--quiet', `--export-marks=${marksFile}`], stream);
  const marks = new Map(
    readFileSync(marksFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ') as [string, string])
      .map(([m, sha]) => [Number(m.slice(1)), sha]),
  );
  const real = (i: number) => marks.get(i + 1) as string; // real(0): before the range, real(i): after change i

  const rnd = mulberry32(options.seed);
  const initial = real(0);
  const oracle = [initial];
  const prs: ReplayPr[] = [];
  let good = 0;
  let number = 0;
  const total = fixture.prs.length + options.bad.length;
  for (let k = 0; k < total; k++) {
    number += 1;
    const wanted = Math.floor(rnd() * (options.maxBehind + 1));
    if (options.bad.includes(k)) {
      const fork = oracle[Math.max(0, oracle.length - 1 - wanted)];
      const top = run(repo, ['ls-tree', fork]);
      const file = run(repo, ['hash-object', '-w', '--stdin'], `CI fails while this file is in the tree (${number})\n`);
      const tree = run(repo, ['mktree'], `${top}\n100644 blob ${file}\tci-fail-${number}.txt\n`);
      prs.push({
        number,
        headSha: run(repo, ['commit-tree', tree, '-p', fork, '-m', `PR ${number} (fails CI)`]),
        bad: true,
        behind: Math.min(wanted, oracle.length - 1),
      });
      continue;
    }
    good += 1;
    let built: { head: string; next: string; behind: number } | null = null;
    for (let behind = Math.min(wanted, oracle.length - 1); behind >= 0 && !built; behind--) {
      const fork = oracle[oracle.length - 1 - behind];
      // Cherry-pick without --merge-base (git 2.40+): a commit with the fork's tree whose parent is
      // the change's parent makes that parent the merge base.
      const onParent = run(repo, ['commit-tree', `${fork}^{tree}`, '-p', real(good - 1), '-m', 'replay: fork on the change parent']);
      const branchTree = mergeTree(repo, [onParent, real(good)]);
      if (branchTree === null) continue;
      const head = run(repo, ['commit-tree', branchTree, '-p', fork, '-m', `PR ${number}`]);
      const mainTree = mergeTree(repo, [oracle[oracle.length - 1], head]);
      if (mainTree === null) continue;
      built = { head, next: run(repo, ['commit-tree', mainTree, '-p', oracle[oracle.length - 1], '-p', head, '-m', `oracle: merge PR ${number}`]), behind };
    }
    if (!built) throw new Error(`the fixture's change ${good} does not apply on main`);
    prs.push({ number, headSha: built.head, bad: false, behind: built.behind });
    oracle.push(built.next);
  }
  run(repo, ['update-ref', '-d', 'refs/replay/real']);
  return { initial, prs, oracle, oracleTrees: oracle.map((c) => git(repo, 'rev-parse', `${c}^{tree}`)) };
}
