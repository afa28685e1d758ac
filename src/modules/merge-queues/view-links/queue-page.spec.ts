import { createHash } from 'node:crypto';
import type { QueuePicture } from '../picture/queue-picture';
import { prPlace, QUEUE_PAGE_CSP, type QueuePageInput, renderNotFoundPage, renderQueuePage } from './queue-page';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const ahead = (ms: number) => new Date(NOW + ms).toISOString();

const picture: QueuePicture = {
  id: '0195a3c2-0000-7000-8000-000000000001',
  repository: 'acme/shop',
  baseRef: 'main',
  baseSha: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
  status: 'active',
  revision: '42',
  batchDepth: 2,
  maxParallel: 2,
  ciDurationMs: 10 * 60_000,
  now: new Date(NOW).toISOString(),
  batches: [
    {
      id: 'b1b1b1b1-aaaa',
      role: 'chain',
      prNumbers: [12, 15],
      status: 'testing',
      requiredChecks: [{ name: 'ci', state: 'pending' }],
      checksUrl: 'https://ci.example.test/runs/7',
      createdAt: ago(60_000),
      estimatedLandAt: ahead(9 * 60_000),
    },
  ],
  waiting: [
    {
      number: 31,
      title: 'Hotfix <script>alert(1)</script>',
      status: 'queued',
      priority: 0,
      setAside: false,
      enqueuedAt: ago(30_000),
      estimatedMergeAt: ahead(20 * 60_000),
    },
    { number: 40, title: 'Conflicts', status: 'blocked', priority: 0, setAside: false, block: 'merge conflict with main', enqueuedAt: ago(90_000) },
  ],
};

const input: QueuePageInput = {
  picture,
  entries: [
    { number: 12, url: 'https://github.test/acme/shop/pull/12', status: 'testing', batchId: 'b1b1b1b1-aaaa', updatedAt: ago(60_000) },
    { number: 9, title: 'Old one', url: 'https://github.test/acme/shop/pull/9', status: 'merged', batchId: 'b0', updatedAt: ago(3_600_000) },
    { number: 8, url: 'https://github.test/acme/shop/pull/8', status: 'failed', batchId: 'bf', updatedAt: ago(7_200_000) },
    { number: 7, url: 'javascript:alert(1)', status: 'removed', block: 'removed by a person', updatedAt: ago(9_000_000) },
  ],
  batches: [
    { id: 'b0b0b0b0', status: 'landed', prNumbers: [9], checksUrl: 'https://ci.example.test/runs/5', updatedAt: ago(3_600_000) },
    { id: 'bf', status: 'failed', prNumbers: [8], failureReason: 'check ci failed', checksUrl: 'https://ci.example.test/runs/4', updatedAt: ago(7_200_000) },
  ],
};

describe('queue page', () => {
  it("names the PR's place: in a batch of the chain, waiting, blocked, failed with why, merged, or absent", () => {
    expect(prPlace(input, 15)).toMatchObject({
      state: 'testing',
      place: expect.stringMatching(/^In batch b1b1b1b1, number 1 of 1 in the chain, tested with #12/),
      ciUrl: 'https://ci.example.test/runs/7',
    });
    expect(prPlace(input, 15)?.eta).toMatch(/^2026-11-29 12:09 UTC \(in about 9m00s\)$/);
    expect(prPlace(input, 31)).toMatchObject({
      state: 'queued',
      place: expect.stringMatching(/^Waiting for a batch: number 1 of 2 waiting, behind 1 batch in/),
    });
    expect(prPlace(input, 40)).toMatchObject({ state: 'blocked', why: 'merge conflict with main' });
    expect(prPlace(input, 40)?.eta).toBeUndefined();
    expect(prPlace(input, 8)).toMatchObject({ state: 'failed', why: 'check ci failed', ciUrl: 'https://ci.example.test/runs/4' });
    expect(prPlace(input, 9)).toMatchObject({ state: 'merged', place: 'Merged at 2026-11-29 11:00 UTC', title: 'Old one' });
    expect(prPlace(input, 99)).toBeUndefined();
  });

  it('is one document in English with one h1, headed sections and tables whose headers have a scope and a caption', () => {
    const html = renderQueuePage({ ...input, pr: 15 });
    expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(html.match(/<h1>/g)).toHaveLength(1);
    expect(html).toContain('<h1>Merge queue acme&#47;shop → main</h1>');
    expect(html.match(/<h2 /g)).toHaveLength(4);
    const tables = html.match(/<table>[\s\S]*?<\/table>/g) ?? [];
    expect(tables).toHaveLength(3);
    for (const table of tables) {
      expect(table).toMatch(/^<table>\n<caption>[^<]+<\/caption>/);
      expect(table.match(/<th(?![a-z])(?! scope="(col|row)")/g)).toBeNull();
    }
    expect(html).not.toMatch(/<script/i);
  });

  it('marks the PR in the drawing and the tables, and says so in words', () => {
    const html = renderQueuePage({ ...input, pr: 15 });
    expect(html).toMatch(/<mark>├─●|<mark>└─●/);
    expect(html).toContain('<tr class="this-pr" aria-current="true"><th scope="row">1</th>');
    expect(html).toContain('<strong>#15 (this PR)</strong>');
    expect(html).toContain('<h2 id="this-pr">Pull request #15</h2>');
    expect(renderQueuePage(input)).not.toContain('this-pr"');
  });

  it('escapes what the queue holds and links only http(s) URLs, with no referrer', () => {
    const html = renderQueuePage({ ...input, pr: 7 });
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('Hotfix &lt;script&gt;alert(1)&lt;&#47;script&gt;');
    expect(html).not.toContain('href="javascript');
    expect(html).toContain('<a href="https:&#47;&#47;ci.example.test&#47;runs&#47;7" rel="noreferrer noopener">CI run</a>');
  });

  it('lists the last landings newest first', () => {
    const html = renderQueuePage(input);
    expect(html).toMatch(/<caption>The most recent batches landed, newest first<\/caption>[\s\S]*2026-11-29 11:00 UTC[\s\S]*#9[\s\S]*Old one/);
  });

  it('allows its own stylesheet only, by hash, and no script', () => {
    const style = /<style>([\s\S]*?)<\/style>/.exec(renderQueuePage(input))?.[1] ?? '';
    expect(QUEUE_PAGE_CSP).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(QUEUE_PAGE_CSP).toMatch(/^default-src 'none';/);
    expect(QUEUE_PAGE_CSP).not.toMatch(/script-src|unsafe/);
  });

  it('has a not-found page that names nothing', () => {
    const html = renderNotFoundPage();
    expect(html).toContain('<h1>Page not found</h1>');
    expect(html).not.toMatch(/acme|queue [0-9a-f]{8}/);
  });
});
