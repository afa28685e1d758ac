import { gzipSync } from 'node:zlib';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { PrismaService } from '@/common/prisma/prisma.service';
import { MAX_CHECK_FAILURES, type BatchState } from '@/modules/merge-queues/planner';
import type { TestTenant } from '../support/factories';
import type { GitProviderEmulator } from '../support/git';
import { commit } from '../support/git-repos';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import type { MergeQueueClient, MqBatch } from '../support/merge-queue-client';
import { until } from '../support/processes';

const TEST_TIMEOUT_MS = 120_000;

/**
 * Failing tests in (issue 40): a check report may name its failing tests (POST .../checks
 * `failures`), a JUnit XML report is a check report of its own route (POST .../checks/junit), and a
 * failing GitHub check run's failure annotations are read by the worker (the emulator, through the
 * real Octokit client). The batch keeps them (its planner state) for the planner's blame and hints;
 * the spec's batch never shows them. A CI that reports pass/fail only is answered as before.
 */
describe('Merge queue failing tests: check reports, JUnit XML and GitHub annotations', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let prisma: PrismaService;
  let owner: TestTenant;
  let mq: MergeQueueClient;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    suite = await githubQueueSuite('failin', { webhooks: true });
    ({ emulator, app, prisma, owner, mq } = suite);
  }, 60_000);

  afterAll(() => suite?.close());

  afterEach(() => Object.assign(emulator.knobs, { down: false }));

  /** A queue with PR 1 enqueued, and its batch once CI is testing its candidate. */
  async function testingBatch(): Promise<{ queueId: string; repository: string; batch: MqBatch & { headSha: string } }> {
    const { queue, path, main, repository } = await suite.newQueue();
    await mq.enqueue(queue.id, 1, commit(path, main, { 'pr-1.txt': 'one\n' }, 'PR 1'));
    const batch = await until('a batch testing its candidate', async () => (await mq.get(queue.id)).batches.find((b) => b.status === 'testing' && b.headSha));
    return { queueId: queue.id, repository, batch: batch as MqBatch & { headSha: string } };
  }

  /** The batch as the planner keeps it (its row's planner part): where the failing tests are, until a batch details resource shows them. */
  async function planned(batchId: string): Promise<BatchState> {
    const row = await prisma.mergeQueueBatch.findFirst({ where: { id: batchId, organizationId: owner.organizationId }, select: { planner: true } });
    return row?.planner as unknown as BatchState;
  }

  /** The queue's events of a type, newest first. */
  async function events(queueId: string, type: string): Promise<{ type: string; detail: Record<string, unknown> }[]> {
    const res = await http().get(`/merge-queues/${queueId}/events?limit=100`).set(owner.auth).expect(200);
    return (res.body.data as { type: string; detail: Record<string, unknown> }[]).filter((e) => e.type === type);
  }

  const checks = (queueId: string, batchId: string) => `/merge-queues/${queueId}/batches/${batchId}/checks`;
  const junit = (queueId: string, batchId: string, sha: string, name = 'ci') => `${checks(queueId, batchId)}/junit?name=${encodeURIComponent(name)}&sha=${sha}`;

  /** Waits until the worker applied the delivery, and returns what it did. */
  const applied = (deliveryId: string) =>
    until(`delivery ${deliveryId} applied`, async () => {
      const row = await prisma.webhookDelivery.findFirst({
        where: { deliveryId, organizationId: owner.organizationId },
        select: { processedAt: true, outcome: true },
      });
      return row?.processedAt ? (row.outcome ?? '') : undefined;
    });

  it(
    'a failing report keeps its failing tests on the batch, deduplicated and bounded (truncation flagged); the batch shown keeps the spec',
    async () => {
      const { queueId, batch } = await testingBatch();
      const failures = [
        { test: 'login > rejects a bad password', file: 'test/login.spec.ts', kind: 'failure', target: '//api:test' },
        { test: 'login > rejects a bad password', file: 'duplicate.ts' },
        ...Array.from({ length: MAX_CHECK_FAILURES + 10 }, (_, i) => ({ test: `generated ${i}` })),
      ];
      const res = await http()
        .post(checks(queueId, batch.id))
        .set(owner.auth)
        .send({ data: { name: 'ci', state: 'failure', sha: batch.headSha, failures } })
        .expect(200);
      expect(res.body.data.requiredChecks).toEqual([{ name: 'ci', state: 'failure' }]);
      expect(JSON.stringify(res.body.data)).not.toContain('failures');
      const kept = await planned(batch.id);
      expect(kept.failures).toHaveLength(MAX_CHECK_FAILURES);
      expect(kept.failures?.[0]).toEqual({
        check: 'ci',
        test: 'login > rejects a bad password',
        target: '//api:test',
        file: 'test/login.spec.ts',
        kind: 'failure',
      });
      expect(kept.failures?.[1]).toEqual({ check: 'ci', test: 'generated 0' });
      expect(kept.failuresTruncated).toBe(true);
      const [reported] = await events(queueId, 'checkReported');
      expect(reported.detail).toMatchObject({ name: 'ci', state: 'failure', failures: failures.length });
      // The queue as GET shows it: the batch keeps the spec's properties only.
      const q = await mq.get(queueId);
      expect(JSON.stringify(q)).not.toContain('failures');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'bad failing tests are a 400 naming the field, and change nothing',
    async () => {
      const { queueId, batch } = await testingBatch();
      const send = (data: Record<string, unknown>) =>
        http()
          .post(checks(queueId, batch.id))
          .set(owner.auth)
          .send({ data: { name: 'ci', sha: batch.headSha, ...data } });
      const cases: [Record<string, unknown>, string][] = [
        [{ state: 'success', failures: [{ test: 'a' }] }, 'data.failures'],
        [{ state: 'pending', failuresTruncated: true }, 'data.failuresTruncated'],
        [{ state: 'failure', failures: Array.from({ length: 201 }, (_, i) => ({ test: `t${i}` })) }, 'data.failures'],
        [{ state: 'failure', failures: [{ file: 'no-test.ts' }] }, 'test'],
        [{ state: 'failure', failures: [{ test: 'x'.repeat(501) }] }, 'test'],
        [{ state: 'failure', failures: [{ test: 'a', kind: 7 }] }, 'kind'],
        [{ state: 'failure', failures: 'a' }, 'data.failures'],
        [{ state: 'failure', failuresTruncated: 'yes' }, 'data.failuresTruncated'],
      ];
      for (const [data, field] of cases) {
        const res = await send(data);
        expect({ data: Object.keys(data), status: res.status, code: res.body.code }).toEqual({
          data: Object.keys(data),
          status: 400,
          code: 'dpa:Request:VALIDATION_FAILED',
        });
        expect(JSON.stringify(res.body)).toContain(field);
      }
      expect((await mq.get(queueId)).batches.find((b) => b.id === batch.id)?.requiredChecks).toEqual([{ name: 'ci', state: 'pending' }]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a pass/fail-only report is answered as before: the check fails, no failing tests are kept',
    async () => {
      const { queueId, batch } = await testingBatch();
      await http()
        .post(checks(queueId, batch.id))
        .set(owner.auth)
        .send({ data: { name: 'ci', state: 'failure', sha: batch.headSha } })
        .expect(200);
      const kept = await planned(batch.id);
      expect(kept.checks).toEqual([{ name: 'ci', state: 'failure' }]);
      expect(kept.failures).toBeUndefined();
      expect(kept.failuresTruncated).toBeUndefined();
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a JUnit report with failing test cases fails the check and names them; one with none passes it',
    async () => {
      const failing = await testingBatch();
      const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="api" tests="3">
    <testcase classname="api.Login" name="rejects a bad password" file="test/login.spec.ts"><failure message="expected 401">at line 12</failure></testcase>
    <testcase classname="api.Login" name="accepts a good one"/>
    <testcase classname="db" name="migrates"><error type="Timeout"/></testcase>
  </testsuite>
</testsuites>`;
      const res = await http()
        .post(junit(failing.queueId, failing.batch.id, failing.batch.headSha))
        .set({ ...owner.auth, 'Content-Type': 'application/xml' })
        .send(xml)
        .expect(200);
      expect(res.body.data.requiredChecks).toEqual([{ name: 'ci', state: 'failure' }]);
      expect((await planned(failing.batch.id)).failures).toEqual([
        { check: 'ci', test: 'api.Login.rejects a bad password', file: 'test/login.spec.ts', kind: 'failure' },
        { check: 'ci', test: 'db.migrates', kind: 'error' },
      ]);
      const [reported] = await events(failing.queueId, 'checkReported');
      expect(reported.detail).toMatchObject({ state: 'failure', via: 'junit', tests: 3, failed: 2, failures: 2 });

      const passing = await testingBatch();
      const ok = await http()
        .post(`${junit(passing.queueId, passing.batch.id, passing.batch.headSha)}&url=${encodeURIComponent('https://ci.example.test/run/1')}`)
        .set({ ...owner.auth, 'Content-Type': 'text/xml', 'Content-Encoding': 'gzip' })
        .send(gzipSync('<testsuite name="all"><testcase name="a"/><testcase name="b"><skipped/></testcase></testsuite>'))
        .expect(200);
      expect(ok.body.data.requiredChecks).toEqual([{ name: 'ci', state: 'success' }]);
      expect(ok.body.data.checksUrl).toBe('https://ci.example.test/run/1');
      expect((await planned(passing.batch.id)).failures).toBeUndefined();
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a JUnit report is bound to the candidate and read safely: another commit 409, malformed 400, DOCTYPE (XXE) 400, no test 422, too large 413, JSON 415',
    async () => {
      const { queueId, batch } = await testingBatch();
      const post = (path: string, body: string | Buffer, type = 'application/xml') =>
        http()
          .post(path)
          .set({ ...owner.auth, 'Content-Type': type })
          .send(body);
      const failingXml = '<testsuite><testcase name="a"><failure/></testcase></testsuite>';

      const other = await post(junit(queueId, batch.id, 'f'.repeat(40)), failingXml);
      expect({ status: other.status, code: other.body.code }).toEqual({ status: 409, code: 'dpa:MergeQueue:CHECK_NOT_FOR_CANDIDATE' });
      expect(other.body.metadata).toMatchObject({ candidateSha: batch.headSha, sha: 'f'.repeat(40) });

      const malformed = await post(junit(queueId, batch.id, batch.headSha), '<testsuite>\n<testcase name="a">\n</testsuite>');
      expect({ status: malformed.status, code: malformed.body.code }).toEqual({ status: 400, code: 'dpa:Request:VALIDATION_FAILED' });
      expect(malformed.body.message).toBe('Invalid request: body: line 3, column 1: </testsuite> closes <testcase>');
      expect(malformed.body.metadata).toMatchObject({ fields: ['body'], line: 3, column: 1 });

      const xxe = await post(
        junit(queueId, batch.id, batch.headSha),
        '<?xml version="1.0"?><!DOCTYPE testsuite [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><testsuite><testcase name="&xxe;"><failure/></testcase></testsuite>',
      );
      expect({ status: xxe.status, code: xxe.body.code }).toEqual({ status: 400, code: 'dpa:Request:VALIDATION_FAILED' });
      expect(xxe.body.message).toMatch(/body: .*a DOCTYPE is not accepted/);
      expect(xxe.text).not.toContain('root:');

      const empty = await post(junit(queueId, batch.id, batch.headSha), '<testsuites><testsuite name="none"/></testsuites>');
      expect({ status: empty.status, code: empty.body.code }).toEqual({ status: 422, code: 'dpa:MergeQueue:JUNIT_NO_TESTS' });

      const big = Buffer.concat([Buffer.from('<testsuite><!--'), Buffer.alloc(5 * 1024 * 1024, 0x20), Buffer.from('--></testsuite>')]);
      const tooLarge = await post(junit(queueId, batch.id, batch.headSha), big);
      expect({ status: tooLarge.status, code: tooLarge.body.code }).toEqual({ status: 413, code: 'dpa:Request:PAYLOAD_TOO_LARGE' });

      const json = await post(junit(queueId, batch.id, batch.headSha), JSON.stringify({ data: {} }), 'application/json');
      expect({ status: json.status, code: json.body.code }).toEqual({ status: 415, code: 'dpa:Request:UNSUPPORTED_MEDIA_TYPE' });

      const noSha = await post(`${checks(queueId, batch.id)}/junit?name=ci`, failingXml);
      expect(noSha.status).toBe(400);
      expect(JSON.stringify(noSha.body)).toContain('sha');

      // None of these changed the batch.
      expect(await planned(batch.id)).toMatchObject({ status: 'testing', checks: [{ name: 'ci', state: 'pending' }] });
      expect((await planned(batch.id)).failures).toBeUndefined();
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a failing GitHub check run's failure annotations become the batch's failing tests (read by the worker from the emulator)",
    async () => {
      const { queueId, repository, batch } = await testingBatch();
      const delivery = await emulator.checkRun(repository, batch.headSha, 'ci', {
        conclusion: 'failure',
        output: { title: '2 tests failed', summary: 'See the annotations' },
        annotations: [
          {
            path: 'test/login.spec.ts',
            start_line: 12,
            end_line: 12,
            annotation_level: 'failure',
            title: 'login > rejects a bad password',
            message: 'expected 401',
          },
          { path: 'README.md', start_line: 1, end_line: 1, annotation_level: 'warning', message: 'a warning is no failing test' },
          { path: 'test/db.spec.ts', start_line: 3, end_line: 4, annotation_level: 'failure', message: 'db migrates\nTimeout after 5000 ms' },
        ],
      });
      expect(delivery.status).toBe(202);
      expect(await applied(delivery.id)).toContain('ci failure');
      const kept = await planned(batch.id);
      expect(kept.checks).toEqual([{ name: 'ci', state: 'failure' }]);
      expect(kept.failures).toEqual([
        { check: 'ci', test: 'login > rejects a bad password', file: 'test/login.spec.ts', kind: 'annotation' },
        { check: 'ci', test: 'db migrates', file: 'test/db.spec.ts', kind: 'annotation' },
      ]);
      const [reported] = await events(queueId, 'checkReported');
      expect(reported.detail).toMatchObject({ failuresFrom: 'annotations', failures: 2 });
      expect(emulator.requests.some((r) => r.path.endsWith('/annotations'))).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a failing check run without annotations counts as before; while GitHub is down the result still counts, without its failing tests, and says why',
    async () => {
      const plain = await testingBatch();
      const before = emulator.requests.filter((r) => r.path.endsWith('/annotations')).length;
      const delivery = await emulator.checkRunCompleted(plain.repository, plain.batch.headSha, 'ci', 'failure');
      await applied(delivery.id);
      expect(await planned(plain.batch.id)).toMatchObject({ checks: [{ name: 'ci', state: 'failure' }] });
      expect((await planned(plain.batch.id)).failures).toBeUndefined();
      expect(emulator.requests.filter((r) => r.path.endsWith('/annotations')).length).toBe(before);
      const [reported] = await events(plain.queueId, 'checkReported');
      expect(reported.detail.failuresFrom).toBe('none: the check run has no annotations');

      const down = await testingBatch();
      emulator.knobs.down = true;
      const unread = await emulator.checkRun(down.repository, down.batch.headSha, 'ci', {
        conclusion: 'failure',
        annotations: [{ path: 'a.ts', start_line: 1, end_line: 1, annotation_level: 'failure', message: 'a fails' }],
      });
      await applied(unread.id);
      emulator.knobs.down = false;
      const kept = await planned(down.batch.id);
      expect(kept.checks).toEqual([{ name: 'ci', state: 'failure' }]);
      expect(kept.failures).toBeUndefined();
      const [noted] = await events(down.queueId, 'checkReported');
      expect(String(noted.detail.failuresUnread)).toMatch(/^the check run's annotations could not be read: /);
    },
    TEST_TIMEOUT_MS,
  );
});
