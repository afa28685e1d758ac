import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createTenant, type TestTenant } from '../support/factories';
import { commit, readFile } from '../support/git-repos';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import type { MergeQueueClient, MqQueue } from '../support/merge-queue-client';

const TEST_TIMEOUT_MS = 180_000;

/** The spec's closed MergeQueueBatch: the only properties it may carry. */
const SPEC_BATCH = ['id', 'position', 'prNumbers', 'status', 'requiredChecks', 'checksUrl', 'headSha', 'operation'];

interface Failure {
  check: string;
  test: string;
  target?: string;
  file?: string;
  kind?: string;
}
interface BatchDetails {
  batch: { id: string; status: string; prNumbers: number[]; headSha?: string } & Record<string, unknown>;
  role: string | null;
  parentId?: string;
  baseSha: string | null;
  candidateSha: string | null;
  failureReason?: string;
  holds: string[];
  failures: Failure[];
  failuresTruncated: boolean;
  suspects: { entryId: string; number: number; batchId: string; failures: Failure[] }[];
  failFirst: Failure[];
}

/** What CI names when the candidate holds the bad PR: two failing tests of `ci`. */
const BROKEN = [
  { test: 'checkout > rejects an empty cart', file: 'test/checkout.spec.ts', kind: 'failure' },
  { test: 'checkout > totals', file: 'test/checkout.spec.ts' },
];
const HINTED: Failure[] = BROKEN.map((f) => ({ check: 'ci', ...f }));

/**
 * Fail-first hints out (issue 40, part 3): a batch fails naming its failing tests (POST .../checks
 * `failures`); the probes and solo runs that hold its suspects carry those tests to run first, on
 * the batch's details and by candidate commit for CI (JSON and text/plain); a candidate without a
 * suspect carries none; another organization and an unknown commit get 404s.
 * The queue is on GitHub (the emulator), the worker in process; the test plays CI.
 */
describe('Merge queue fail-first hints (batch details, hints by candidate commit)', () => {
  let suite: GithubQueueSuite;
  let app: NestExpressApplication;
  let owner: TestTenant;
  let intruder: TestTenant;
  let mq: MergeQueueClient;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    suite = await githubQueueSuite('fail_first');
    ({ app, owner, mq } = suite);
    intruder = await createTenant(app, 'mq-fail-first-intruder');
  }, 60_000);

  afterAll(async () => {
    await suite?.close();
  });

  const details = async (queueId: string, batchId: string, auth = owner.auth) =>
    (await http().get(`/merge-queues/${queueId}/batches/${batchId}/details`).set(auth).expect(200)).body.data as BatchDetails;

  it(
    "a failed batch's suspects carry its failing tests to run first, on their probes' details and by candidate commit (JSON and text)",
    async () => {
      const { path, main, queue } = await suite.newQueue({ settings: { maxParallel: 2, minBatch: 4, maxBatch: 4 } });
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      const entries = [];
      for (const n of [1, 2, 3, 4]) {
        const files = n === 3 ? { 'pr-3.txt': 'change 3\n', 'bad.txt': 'breaks checkout\n' } : { [`pr-${n}.txt`]: `change ${n}\n` };
        entries.push(await mq.enqueue(queue.id, n, commit(path, main, files, `PR ${n}`)));
      }
      const numberOf = new Map(entries.map((e) => [e.id, e.number]));
      await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);

      // CI: each candidate under test is reported once, failing (and naming BROKEN) when it holds bad.txt.
      // Every candidate's details and hints are read while it is under test, before its result.
      const seen: BatchDetails[] = [];
      const byCommit = new Map<string, { json: unknown; text: string; type: string; vary: string | undefined }>();
      const reported = new Set<string>();
      const onChain = new Map<string, number | undefined>();
      const deadline = Date.now() + 150_000;
      let q: MqQueue;
      for (;;) {
        q = await mq.get(queue.id);
        if (q.entries.every((e) => ['merged', 'failed'].includes(e.status))) break;
        if (Date.now() > deadline) throw new Error(`timed out; queue: ${JSON.stringify(q, null, 1)}`);
        for (const b of q.batches) {
          if (b.status !== 'testing' || !b.headSha || reported.has(b.id)) continue;
          const d = await details(queue.id, b.id);
          seen.push(d);
          const json = await http().get(`/merge-queues/${queue.id}/commits/${b.headSha}/fail-first`).set(owner.auth).expect(200);
          const text = await http().get(`/merge-queues/${queue.id}/commits/${b.headSha}/fail-first`).set(owner.auth).set('Accept', 'text/plain').expect(200);
          byCommit.set(b.headSha, { json: json.body, text: text.text, type: text.headers['content-type'], vary: text.headers.vary });
          const chain = (await http().get(`/merge-queues/${queue.id}/chain`).set(owner.auth).expect(200)).body.data as {
            batches: { id: string; failFirst?: number }[];
          };
          onChain.set(b.id, chain.batches.find((x) => x.id === b.id)?.failFirst);
          const bad = readFile(path, b.headSha, 'bad.txt') !== null;
          const body = { data: { name: 'ci', state: bad ? 'failure' : 'success', sha: b.headSha, ...(bad && { failures: BROKEN }) } };
          await http().post(`/merge-queues/${queue.id}/batches/${b.id}/checks`).set(owner.auth).send(body).expect(200);
          reported.add(b.id);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(q.entries.map((e) => [e.number, e.status]).sort()).toEqual([
        [1, 'merged'],
        [2, 'merged'],
        [3, 'failed'],
        [4, 'merged'],
      ]);

      // The first candidate (PRs 1-4 on main) held no suspect: no hints, as JSON and as text.
      const [first] = seen;
      expect(first.role).toBe('chain');
      expect(first.batch.prNumbers).toEqual([1, 2, 3, 4]);
      expect([first.suspects, first.failFirst, first.failures]).toEqual([[], [], []]);
      const firstHints = byCommit.get(first.candidateSha as string);
      expect(firstHints?.json).toEqual({ data: { sha: first.candidateSha, batchId: first.batch.id, tests: [] } });
      expect(firstHints?.text).toBe('');
      expect(firstHints?.type).toMatch(/^text\/plain/);
      expect(firstHints?.vary).toMatch(/Accept/);
      expect(onChain.get(first.batch.id)).toBeUndefined();

      // Once failed, it shows the failing tests CI named, and its spec batch stays closed.
      const failed = await details(queue.id, first.batch.id);
      expect(failed.batch.status).toBe('failed');
      expect(failed.failures).toEqual(HINTED);
      expect(failed.failuresTruncated).toBe(false);
      expect(Object.keys(failed.batch).filter((k) => !SPEC_BATCH.includes(k))).toEqual([]);
      expect(failed.batch).toEqual((await mq.get(queue.id)).batches.find((b) => b.id === first.batch.id));
      expect([failed.candidateSha, failed.baseSha]).toEqual([failed.batch.headSha, main]);

      // Every run after it that held a suspect (probes, solo runs, rebuilt candidates) carried the
      // failing tests as hints, on its details and by its commit; PR 3's runs among them.
      const later = seen.slice(1);
      const withSuspects = later.filter((d) => d.suspects.length > 0);
      expect(withSuspects.length).toBeGreaterThan(0);
      expect(withSuspects.some((d) => d.holds.some((id) => numberOf.get(id) === 3))).toBe(true);
      for (const d of withSuspects) {
        expect({ batch: d.batch.prNumbers, failFirst: d.failFirst }).toEqual({ batch: d.batch.prNumbers, failFirst: HINTED });
        for (const s of d.suspects) expect(s.failures).toEqual(HINTED);
        expect(d.suspects.every((s) => d.holds.includes(s.entryId))).toBe(true);
        const hints = byCommit.get(d.candidateSha as string);
        expect(hints?.json).toEqual({ data: { sha: d.candidateSha, batchId: d.batch.id, tests: HINTED } });
        expect(hints?.text).toBe('checkout > rejects an empty cart\ncheckout > totals\n');
        // The chain view counts them.
        expect(onChain.get(d.batch.id)).toBe(HINTED.length);
      }
      // Those that held none carried nothing.
      for (const d of later.filter((x) => x.suspects.length === 0)) {
        expect(d.failFirst).toEqual([]);
        expect(byCommit.get(d.candidateSha as string)?.text).toBe('');
        expect(onChain.get(d.batch.id)).toBeUndefined();
      }
      expect(withSuspects.some((d) => d.role === 'part')).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'another organization gets 404s; an unknown batch or commit is a 404 naming what is missing',
    async () => {
      const { path, main, queue } = await suite.newQueue();
      await http().post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
      await mq.enqueue(queue.id, 1, commit(path, main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
      await http().post(`/merge-queues/${queue.id}/resume`).set(owner.auth).expect(200);
      const b = await (async () => {
        for (let i = 0; i < 600; i++) {
          const found = (await mq.get(queue.id)).batches.find((x) => x.status === 'testing' && x.headSha);
          if (found) return found;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error('no batch under test');
      })();
      const sha = b.headSha as string;

      // The owner reads both; the candidate holds no suspect.
      expect((await details(queue.id, b.id)).failFirst).toEqual([]);
      await http().get(`/merge-queues/${queue.id}/commits/${sha}/fail-first`).set(owner.auth).expect(200);

      // Another organization: the queue's 404, nothing of it shown.
      for (const path_ of [`/merge-queues/${queue.id}/batches/${b.id}/details`, `/merge-queues/${queue.id}/commits/${sha}/fail-first`]) {
        const res = await http().get(path_).set(intruder.auth).expect(404);
        expect(res.body.code).toBe('dpa:MergeQueue:NOT_FOUND');
        expect(JSON.stringify(res.body)).not.toContain(sha);
      }

      // Unknown batch, a batch id that is no id, an unknown commit, a commit that is none.
      const unknownBatch = await http().get(`/merge-queues/${queue.id}/batches/01900000-0000-7000-8000-000000000000/details`).set(owner.auth).expect(404);
      expect(unknownBatch.body.code).toBe('dpa:MergeQueue:BATCH_NOT_FOUND');
      expect((await http().get(`/merge-queues/${queue.id}/batches/b1/details`).set(owner.auth).expect(404)).body.code).toBe('dpa:MergeQueue:BATCH_NOT_FOUND');
      const unknownSha = await http().get(`/merge-queues/${queue.id}/commits/${main}/fail-first`).set(owner.auth).expect(404);
      expect(unknownSha.body.code).toBe('dpa:MergeQueue:CANDIDATE_NOT_FOUND');
      expect(unknownSha.body.metadata).toEqual({ sha: main });
      // Asked as text, the 404 is still the error body (a CI step's `curl -f` fails and runs everything).
      const asText = await http()
        .get(`/merge-queues/${queue.id}/commits/${'0'.repeat(40)}/fail-first`)
        .set(owner.auth)
        .set('Accept', 'text/plain')
        .expect(404);
      expect(asText.body.code).toBe('dpa:MergeQueue:CANDIDATE_NOT_FOUND');
      expect((await http().get(`/merge-queues/${queue.id}/commits/HEAD/fail-first`).set(owner.auth).expect(404)).body.code).toBe(
        'dpa:MergeQueue:CANDIDATE_NOT_FOUND',
      );
    },
    TEST_TIMEOUT_MS,
  );
});
