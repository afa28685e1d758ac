import request from 'supertest';
import type { PrismaService } from '@/common/prisma/prisma.service';
import { commit, git, readFile } from './git-repos';

/** The MergeQueue as the API renders it (the fields the tests read). */
export interface MqBatch {
  id: string;
  status: string;
  prNumbers: number[];
  headSha?: string;
  requiredChecks: { name: string; state: string }[];
  operation?: { kind: string; outcome: string };
}
export interface MqEntry {
  id: string;
  number: number;
  headSha: string;
  status: string;
  block?: string;
  title?: string;
  batchId?: string;
}
/** An entry's details (GET /merge-queues/{id}/entries/{entryId}/details): the spec's entry and what it does not carry. */
export interface MqEntryDetails {
  entry: MqEntry;
  origin: { via: string; actor: string; actorKind: string } | null;
  title: string | null;
  titleSource: 'request' | 'github' | null;
  lanes?: string[];
  pathsStatus?: string;
  lanesReason?: string;
  pathsCount?: number;
  pathsHead?: string;
  batch: MqBatch | null;
  enqueuedAt: string;
  updatedAt: string;
  events: { type: string; detail: Record<string, unknown>; transitions: { subject: string; id: string; from: string; to: string }[] }[];
}
export interface MqQueue {
  id: string;
  status: string;
  revision: string;
  entries: MqEntry[];
  batches: MqBatch[];
}

/** Where the API is: an app's HTTP server or a process's URL. */
type Target = Parameters<typeof request>[0];

/**
 * A tenant's view of merge queues through the API, and CI played by the test: the helpers every
 * merge-queue suite needs (LOCAL_GIT, GitHub on the emulator, real processes).
 */
export class MergeQueueClient {
  constructor(
    private readonly target: () => Target,
    private readonly auth: { Authorization: string },
    private readonly prisma: PrismaService,
  ) {}

  /** A queue on the code source's `main` requiring `ci`, with `settings`. */
  async create(codeSourceId: string, settings: Record<string, unknown> = {}): Promise<MqQueue> {
    const body = { data: { codeSourceId, baseRef: 'main', requiredChecks: ['ci'], ...settings } };
    return (await request(this.target()).post('/merge-queues').set(this.auth).send(body).expect(201)).body.data as MqQueue;
  }

  async get(id: string): Promise<MqQueue> {
    return (await request(this.target()).get(`/merge-queues/${id}`).set(this.auth).expect(200)).body.data as MqQueue;
  }

  /** The entry's details (its lanes and where they come from, its origin, its title's source, its events). */
  async details(queueId: string, entryId: string): Promise<MqEntryDetails> {
    return (await request(this.target()).get(`/merge-queues/${queueId}/entries/${entryId}/details`).set(this.auth).expect(200)).body.data as MqEntryDetails;
  }

  /** Every entry the queue lists with its details, by PR number. */
  async detailsByNumber(queueId: string): Promise<Map<number, MqEntryDetails>> {
    const entries = (await this.get(queueId)).entries;
    return new Map(await Promise.all(entries.map(async (e) => [e.number, await this.details(queueId, e.id)] as const)));
  }

  async enqueue(queueId: string, number: number, headSha: string, extra: Record<string, unknown> = {}): Promise<MqEntry> {
    const body = { data: { number, headSha, url: `https://example.test/pr/${number}`, title: `PR ${number}`, ...extra } };
    return (await request(this.target()).post(`/merge-queues/${queueId}/entries`).set(this.auth).send(body).expect(201)).body.data as MqEntry;
  }

  /**
   * Acts as CI until `done` holds: every candidate under test gets `ci` reported, `failure` when
   * the candidate holds `bad.txt`. `report` false leaves CI silent (for pause and timeouts);
   * `only` picks the batches CI reports on for now.
   */
  async runCi(
    queueId: string,
    repoPath: string,
    done: (q: MqQueue) => boolean,
    options: { report?: () => boolean; timeoutMs?: number; only?: (batchId: string) => Promise<boolean> } = {},
  ): Promise<MqQueue> {
    const reported = new Set<string>();
    const deadline = Date.now() + (options.timeoutMs ?? 25_000);
    for (;;) {
      const q = await this.get(queueId);
      if (done(q)) return q;
      if (Date.now() > deadline) throw new Error(`timed out; queue: ${JSON.stringify(q, null, 1)}`);
      if (options.report?.() ?? true) {
        for (const b of q.batches) {
          if (b.status !== 'testing' || !b.headSha || reported.has(b.id)) continue;
          if (options.only && !(await options.only(b.id))) continue;
          const bad = readFile(repoPath, b.headSha, 'bad.txt') !== null;
          const body = { data: { name: 'ci', state: bad ? 'failure' : 'success', sha: b.headSha, url: `https://ci.example.test/${b.id}` } };
          await request(this.target()).post(`/merge-queues/${queueId}/batches/${b.id}/checks`).set(this.auth).send(body).expect(200);
          reported.add(b.id);
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * The scenario every provider must pass: PRs 1-3, each adding a file, enqueued in order and run
   * through CI. All merge; main holds exactly their files and the base's; the merge commits come
   * in queue order; and the base only ever moved to candidates that passed CI, each a fast-forward
   * of the one before (the last is main). Returns the queue and main for provider-specific checks.
   */
  async landsThreeInOrder(queueId: string, repo: { path: string; main: string }, timeoutMs = 60_000): Promise<{ q: MqQueue; main: string }> {
    for (const n of [1, 2, 3]) await this.enqueue(queueId, n, commit(repo.path, repo.main, { [`pr-${n}.txt`]: `change ${n}\n` }, `PR ${n}`));
    const q = await this.runCi(queueId, repo.path, (x) => x.entries.length === 3 && x.entries.every((e) => e.status === 'merged'), { timeoutMs });
    const main = git(repo.path, 'rev-parse', 'main');
    expect(git(repo.path, 'ls-tree', '--name-only', main).split('\n').sort()).toEqual(['README.md', 'pr-1.txt', 'pr-2.txt', 'pr-3.txt']);
    for (const n of [1, 2, 3]) expect(readFile(repo.path, main, `pr-${n}.txt`)).toBe(`change ${n}\n`);
    expect(readFile(repo.path, main, 'README.md')).toBe('hello\n');
    expect(firstParentMerges(repo.path).map((s) => s.split(' ')[1])).toEqual(['#1', '#2', '#3']);
    const landed = q.batches.filter((b) => b.status === 'landed');
    expect(landed.length).toBeGreaterThan(0);
    let previous = repo.main;
    for (const b of [...landed].sort((x, y) => x.prNumbers[0] - y.prNumbers[0])) {
      expect(b.requiredChecks).toEqual([{ name: 'ci', state: 'success' }]);
      expect(git(repo.path, 'rev-list', '--count', `${b.headSha}..${previous}`)).toBe('0');
      previous = b.headSha as string;
    }
    expect(previous).toBe(main);
    return { q, main };
  }

  /** Waits until the executor has answered every operation of the queue. */
  async quiet(queueId: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && (await this.prisma.mergeQueueOperation.count({ where: { queueId, finishedAt: null } })) > 0)
      await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every entry has come to rest (blocked waits on a person). */
export const finalEntries = (q: MqQueue) => q.entries.every((e) => ['merged', 'failed', 'removed', 'blocked'].includes(e.status));

/** The subjects of the merge commits on the base's first-parent line, oldest first. */
export const firstParentMerges = (repo: string, base = 'main') =>
  git(repo, 'log', '--first-parent', '--format=%s', base)
    .split('\n')
    .filter((s) => s.startsWith('Merge #'))
    .reverse();
