import request from 'supertest';
import { RedisService } from '@/common/redis/redis.module';
import { CommitStatusRepairs } from '@/modules/merge-queues/commit-statuses/commit-status-ledger';
import { CommitStatusesProcessor } from '@/modules/merge-queues/commit-statuses.processor';
import { commit } from '../support/git-repos';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import { until } from '../support/processes';

/**
 * Commit statuses the provider refused on every attempt are posted again later, as the queue shows
 * them then (CommitStatusesProcessor.repair): before, a PR behind the front of the line kept a
 * refused status until it reached the front. Two attempts 10 ms apart here instead of ten over 17
 * minutes; the repair runs when the test calls it.
 */
describe('Merge queue commit statuses: repairing posts the provider refused', () => {
  let suite: GithubQueueSuite;

  beforeAll(async () => {
    suite = await githubQueueSuite('status_repair', {
      config: (config) => ({
        ...config,
        mergeQueues: { ...config.mergeQueues, statusPostAttempts: 2, statusPostBackoffMs: 10, statusRepairIntervalMs: 3_600_000 },
      }),
    });
  }, 60_000);

  afterAll(() => suite?.close());

  it('keeps a status refused on every attempt and posts it again from the queue as it is then, as often as it takes; a head that moved on is forgotten', async () => {
    const { emulator, app, worker, owner, mq, config } = suite;
    const { path, main, queue } = await suite.newQueue();
    await request(app.getHttpServer()).post(`/merge-queues/${queue.id}/pause`).set(owner.auth).expect(200);
    const repairs = new CommitStatusRepairs(app.get(RedisService).client, config.queuePrefix);
    emulator.knobs.statusFailures = 1_000;
    const one = commit(path, main, { 'one.txt': '1\n' }, 'PR 1');
    const twoOld = commit(path, main, { 'two.txt': '2\n' }, 'PR 2');
    const twoNew = commit(path, main, { 'two.txt': '2, again\n' }, 'PR 2, pushed again');
    await mq.enqueue(queue.id, 1, one);
    const two = await mq.enqueue(queue.id, 2, twoOld);
    await until('the old head of PR 2 refused', async () => (await repairs.oldest(10)).some((r) => r.repair.sha === twoOld));
    await request(app.getHttpServer())
      .patch(`/merge-queues/${queue.id}/entries/${two.id}`)
      .set(owner.auth)
      .send({ data: { headSha: twoNew } })
      .expect(200);
    const kept = await until('every post refused twice and kept for repair', async () => {
      const shas = new Set((await repairs.oldest(10)).map((r) => r.repair.sha));
      return shas.has(one) && shas.has(twoOld) && shas.has(twoNew) ? shas : undefined;
    });
    expect(kept.size).toBe(3);
    expect(emulator.statuses.filter((s) => [one, twoOld, twoNew].includes(s.sha))).toEqual([]);

    // A first repair while the provider still refuses: its posts are refused twice too, and kept again.
    const processor = worker.get(CommitStatusesProcessor);
    expect(await processor.repair()).toEqual({ reposted: 2, forgotten: 1 });
    await until('the repaired posts refused again and kept', async () => {
      const shas = (await repairs.oldest(10)).map((r) => r.repair.sha).sort();
      return shas.length === 2 && shas.includes(one) && shas.includes(twoNew);
    });
    // The second repair, at the same queue revision, is new jobs (not the failed ones' ids), and they post.
    emulator.knobs.statusFailures = 0;
    const result = await processor.repair();
    expect(result).toEqual({ reposted: 2, forgotten: 0 });
    expect(await repairs.oldest(10)).toEqual([]);
    await until('the repaired statuses posted', async () => emulator.statuses.some((s) => s.sha === one) && emulator.statuses.some((s) => s.sha === twoNew));
    const posted = (sha: string) => emulator.statuses.filter((s) => s.sha === sha).map((s) => `${s.state}: ${s.description}`);
    expect(posted(one)).toEqual([expect.stringMatching(/^pending: Queued: position 1/)]);
    expect(posted(twoNew)).toEqual([expect.stringMatching(/^pending: Queued: position 2/)]);
    expect(posted(twoOld)).toEqual([]);
  }, 60_000);
});
