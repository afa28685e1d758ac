import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { chromium, type BrowserContext } from 'playwright-core';
import request from 'supertest';
import type { AppConfig } from '@/common/config/app-config';
import type { PrismaService } from '@/common/prisma/prisma.service';
import { QUEUE_PAGE_CSP, renderNotFoundPage } from '@/modules/merge-queues/view-links/queue-page';
import { signViewLink, viewLinkKey } from '@/modules/merge-queues/view-links/view-link-token';
import { createTenant, type TestTenant } from '../support/factories';
import type { GitProviderEmulator } from '../support/git';
import { commit, git } from '../support/git-repos';
import { type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import type { MergeQueueClient } from '../support/merge-queue-client';
import { until } from '../support/processes';

const TEST_TIMEOUT_MS = 90_000;
/** Debian's chromium, found or installed by npm test's setup (tools/workspace/browser.ts); the reason when it could not be. */
const CHROMIUM = process.env.DPA_TEST_CHROMIUM ?? (existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined);
const SKIP_REASON = process.env.DPA_TEST_CHROMIUM_SKIP ?? 'no chromium at /usr/bin/chromium (npm test installs it where it can)';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SCREENSHOT = resolve(__dirname, '../output/queue-page.png');

/**
 * The page behind every commit status the queue posts (issue 39): a GitHub queue on the emulator
 * whose statuses link to GET /view/merge-queues/{id}/{token}?pr=N, the view-link routes, and the
 * page opened in Debian's chromium.
 */
describe('The merge queue page behind its commit statuses (GitHub emulator, in-process worker, chromium)', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let prisma: PrismaService;
  let owner: TestTenant;
  let mq: MergeQueueClient;
  let config: AppConfig;
  let origin: string;
  let repository: string;
  let queueId: string;
  let otherQueueId: string;
  let repoPath: string;
  /** The link the last status on PR 5's head carries, as GitHub shows it. */
  let prLink: URL;
  const http = () => request(app.getHttpServer());
  const path = (url: URL) => `${url.pathname}${url.search}`;
  const statusLinks = (sha: string) => emulator.statuses.filter((x) => x.sha === sha && x.context === 'merge-queue/main').map((x) => x.targetUrl ?? '');
  /** A link of this queue whose time is up: a real row and its token, signed as the server signs them. */
  const expiredLink = async () => {
    const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 1000);
    const row = await prisma.mergeQueueViewLink.create({ data: { organizationId: owner.organizationId, queueId, expiresAt } });
    const key = viewLinkKey(config.credentialKeys.keys[config.credentialKeys.current]);
    return new URL(`${origin}/view/merge-queues/${queueId}/${signViewLink(key, { linkId: row.id, queueId, expiresAt })}?pr=5`);
  };
  const tampered = (url: URL) =>
    new URL(url.href.replace(/_([A-Za-z0-9_-])([A-Za-z0-9_-]{42})\?/, (_m, c: string, rest: string) => `_${c === 'A' ? 'B' : 'A'}${rest}?`));

  beforeAll(async () => {
    suite = await githubQueueSuite('page', { listen: true });
    ({ emulator, app, prisma, owner, mq, config } = suite);
    origin = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    // PRs 1 and 3 land, 2 fails its CI; then 4 and 5 wait behind a batch whose CI has not reported.
    const made = await suite.newQueue();
    ({ repository, path: repoPath } = made);
    queueId = made.queue.id;
    otherQueueId = (await suite.newQueue()).queue.id;
    const heads = new Map<number, string>();
    for (const n of [1, 2, 3]) {
      heads.set(n, commit(made.path, made.main, n === 2 ? { 'bad.txt': 'breaks\n' } : { [`pr-${n}.txt`]: `change ${n}\n` }, `PR ${n}`));
      await mq.enqueue(queueId, n, heads.get(n)!, { url: `https://github.test/${repository}/pull/${n}` });
    }
    await mq.runCi(queueId, made.path, (q) => q.entries.filter((e) => ['merged', 'failed'].includes(e.status)).length === 3, { timeoutMs: 60_000 });
    for (const n of [4, 5]) {
      heads.set(n, commit(made.path, made.main, { [`pr-${n}.txt`]: `change ${n}\n` }, `PR ${n}`));
      await mq.enqueue(queueId, n, heads.get(n)!, { url: `https://github.test/${repository}/pull/${n}` });
    }
    await until('a batch testing', async () => (await mq.get(queueId)).batches.some((b) => b.status === 'testing'));
    const link = await until('a status on PR 5 linking the page', async () => statusLinks(heads.get(5)!).find((u) => u.includes('/view/merge-queues/')));
    prLink = new URL(link);
  }, 120_000);

  afterAll(async () => {
    await suite?.close();
  });

  it('every status the queue posts links to the page of its queue at its PR, with a token the server signed', async () => {
    expect(prLink.origin).toBe(config.git.publicUrl);
    expect(prLink.pathname).toMatch(new RegExp(`^/view/merge-queues/${queueId}/dpqv_[0-9a-f]{32}_\\d+_[A-Za-z0-9_-]{43}$`));
    expect(prLink.search).toBe('?pr=5');
    const all = emulator.statuses.filter((x) => x.context === 'merge-queue/main' && x.targetUrl?.includes(queueId));
    expect(all.length).toBeGreaterThan(5);
    // The PRs' statuses point at their PR; a candidate's at the queue. One status link for the queue.
    expect(all.every((x) => x.targetUrl!.startsWith(`${config.git.publicUrl}/view/merge-queues/${queueId}/dpqv_`))).toBe(true);
    expect(new Set(all.map((x) => new URL(x.targetUrl!).pathname)).size).toBe(1);
    const listed = (await http().get(`/merge-queues/${queueId}/view-links`).set(owner.auth).expect(200)).body;
    expect(listed.data).toEqual([expect.objectContaining({ queueId, forStatuses: true })]);
    expect(JSON.stringify(listed)).not.toContain('dpqv_');
  });

  it("opens with no API token: the queue, the PR's place and ETA, a failed PR's reason and CI run, the last landings; no script, not cached, no referrer", async () => {
    const res = await http().get(path(prLink)).expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['content-security-policy']).toBe(QUEUE_PAGE_CSP);
    expect(res.text).toContain(`<h1>Merge queue ${repository.replace('/', '&#47;')} → main</h1>`);
    expect(res.text).toMatch(/<h2 id="this-pr">Pull request #5<\/h2>/);
    expect(res.text).toMatch(/<dt>Place<\/dt><dd>(In batch|Waiting for a batch)/);
    expect(res.text).toMatch(/<dt>Expected to merge<\/dt><dd>\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(res.text).toMatch(/<caption>The most recent batches landed, newest first<\/caption>[\s\S]*#1/);
    const failed = await http().get(`${prLink.pathname}?pr=2`).expect(200);
    expect(failed.text).toMatch(/<dt>State<\/dt><dd>failed<\/dd>/);
    expect(failed.text).toMatch(/<dt>Why it failed<\/dt><dd>check ci failed<\/dd>/);
    expect(failed.text).toMatch(/<dt>CI run<\/dt><dd><a href="https:&#47;&#47;ci.example.test&#47;/);
  });

  it('a changed, expired or revoked link, or one for another queue, is the same 404 page that shows nothing of the queue', async () => {
    const made = (
      await http()
        .post(`/merge-queues/${queueId}/view-links`)
        .set(owner.auth)
        .send({ data: { expiresInDays: 1 } })
        .expect(201)
    ).body.data;
    expect(made.url).toMatch(new RegExp(`^${config.git.publicUrl}/view/merge-queues/${queueId}/dpqv_`));
    await http()
      .get(path(new URL(made.url)))
      .expect(200);
    await http().delete(`/merge-queues/${queueId}/view-links/${made.id}`).set(owner.auth).expect(200);
    const refused = [
      path(tampered(prLink)),
      path(await expiredLink()),
      path(new URL(made.url)),
      prLink.pathname.replace(queueId, otherQueueId),
      `/view/merge-queues/${queueId}/dpqv_nothing`,
    ];
    for (const url of refused) {
      // A browser gets the plain page, any other client the error body: neither names the queue.
      const page = await http().get(url).set('Accept', 'text/html,application/xhtml+xml,*/*;q=0.8').expect(404);
      expect(page.text).toBe(renderNotFoundPage());
      expect(page.headers['cache-control']).toBe('no-store');
      const body = await http().get(url).expect(404);
      expect(body.body).toEqual({
        code: 'dpa:MergeQueue:VIEW_LINK_NOT_FOUND',
        message: 'The merge queue view link does not exist.',
        requestId: expect.any(String),
      });
      for (const res of [page, body]) expect(res.text).not.toContain(repository.split('/')[1]);
    }
  });

  it('view links: made by an admin with a bounded life, listed without their token, revoked; members of other organizations see none', async () => {
    await http()
      .post(`/merge-queues/${queueId}/view-links`)
      .set(owner.auth)
      .send({ data: { expiresInDays: 0 } })
      .expect(400);
    const long = await http()
      .post(`/merge-queues/${queueId}/view-links`)
      .set(owner.auth)
      .send({ data: { expiresInDays: 365 } })
      .expect(422);
    expect(long.body.code).toBe('dpa:MergeQueue:VIEW_LINK_TOO_LONG');
    const res = await http().post(`/merge-queues/${queueId}/view-links`).set(owner.auth).send({ data: {} }).expect(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Date.parse(res.body.data.expiresAt) - Date.now()).toBeGreaterThan((config.mergeQueues.viewLinkTtlDays - 1) * 86_400_000);
    const again = await http().delete(`/merge-queues/${queueId}/view-links/${res.body.data.id}`).set(owner.auth).expect(200);
    expect(again.body.data.revokedAt).toBeDefined();
    await http().delete(`/merge-queues/${queueId}/view-links/${res.body.data.id}`).set(owner.auth).expect(200);
    await http().delete(`/merge-queues/${queueId}/view-links/nope`).set(owner.auth).expect(404);
    const stranger = await createTenant(app, 'page-stranger');
    const hidden = await http().get(`/merge-queues/${queueId}/view-links`).set(stranger.auth).expect(404);
    expect(hidden.body.code).toBe('dpa:MergeQueue:NOT_FOUND');
    await http().delete(`/merge-queues/${queueId}/view-links/${res.body.data.id}`).set(stranger.auth).expect(404);
  });

  it('revoking the status link ends every link the statuses carried; the next status carries a fresh one', async () => {
    const statusLink = (await http().get(`/merge-queues/${queueId}/view-links`).set(owner.auth).expect(200)).body.data.find(
      (l: { forStatuses: boolean; revokedAt?: string }) => l.forStatuses && !l.revokedAt,
    );
    await http().delete(`/merge-queues/${queueId}/view-links/${statusLink.id}`).set(owner.auth).expect(200);
    await http().get(path(prLink)).expect(404);
    const before = emulator.statuses.length;
    // A new PR makes the queue post again.
    const head = commit(repoPath, git(repoPath, 'rev-parse', 'main'), { 'pr-6.txt': 'change 6\n' }, 'PR 6');
    await mq.enqueue(queueId, 6, head);
    const fresh = new URL(await until('a status with a fresh link', async () => emulator.statuses.slice(before).find((x) => x.sha === head)?.targetUrl));
    expect(fresh.pathname).not.toBe(prLink.pathname);
    await http().get(path(fresh)).expect(200);
    prLink = new URL(`${fresh.origin}${fresh.pathname}?pr=5`);
  });

  const browserIt = CHROMIUM ? it : it.skip;
  if (!CHROMIUM) process.stdout.write(`skipping the browser test of the queue page: ${SKIP_REASON}\n`);

  browserIt(
    "in chromium, with JavaScript off: the link from a real status shows the PR's place in real tables; a changed or expired link shows nothing",
    async () => {
      const profile = mkdtempSync(join(tmpdir(), 'dpa-chromium-'));
      let context: BrowserContext | undefined;
      try {
        context = await chromium.launchPersistentContext(profile, {
          executablePath: CHROMIUM,
          args: CHROMIUM_ARGS,
          javaScriptEnabled: false,
          viewport: { width: 1280, height: 900 },
        });
        const page = await context.newPage();
        const at = (url: URL) => `${origin}${url.pathname}${url.search}`;
        const response = await page.goto(at(prLink));
        expect(response?.status()).toBe(200);
        expect(await page.locator('html').getAttribute('lang')).toBe('en');
        expect(await page.locator('h1').count()).toBe(1);
        expect(await page.locator('h1').innerText()).toBe(`Merge queue ${repository} → main`);
        const section = page.locator('section[aria-labelledby="this-pr"]');
        expect(await section.locator('h2').innerText()).toBe('Pull request #5');
        expect(await section.locator('dt:has-text("Place") + dd').innerText()).toMatch(
          /^(In batch [0-9a-f]{8}, number \d of \d in the chain|Waiting for a batch: number \d of \d waiting)/,
        );
        expect(await section.locator('dt:has-text("Expected to merge") + dd').innerText()).toMatch(/UTC/);
        // The PR's row is marked, in the table and for assistive technology.
        expect(await page.locator('tr[aria-current="true"]').count()).toBeGreaterThan(0);
        expect(await page.locator('tr[aria-current="true"]').first().innerText()).toContain('#5 (this PR)');
        // Real tables: a caption each, every header cell scoped.
        const tables = page.locator('table');
        expect(await tables.count()).toBeGreaterThanOrEqual(2);
        for (let i = 0; i < (await tables.count()); i++) {
          expect((await tables.nth(i).locator('caption').innerText()).length).toBeGreaterThan(0);
          expect(await tables.nth(i).locator('th:not([scope="col"]):not([scope="row"])').count()).toBe(0);
          expect(await tables.nth(i).locator('thead th[scope="col"]').count()).toBeGreaterThan(2);
        }
        expect(await page.locator('pre').innerText()).toContain(`● main @`);
        mkdirSync(resolve(SCREENSHOT, '..'), { recursive: true });
        await page.screenshot({ path: SCREENSHOT, fullPage: true });
        process.stdout.write(`queue page screenshot: ${SCREENSHOT}\n`);
        for (const url of [tampered(prLink), await expiredLink()]) {
          const refused = await page.goto(at(url));
          expect(refused?.status()).toBe(404);
          expect(await page.locator('h1').innerText()).toBe('Page not found');
          expect(await page.locator('body').innerText()).not.toContain(repository.split('/')[1]);
          expect(await page.locator('table').count()).toBe(0);
        }
      } finally {
        await context?.close();
        rmSync(profile, { recursive: true, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );
});
