import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { buildIfStale } from '@tools/workspace/build';
import { ensureDatabase, withDatabase } from '@tools/workspace/databases';
import { eventually } from '../support/eventually';
import { freePort, ROOT } from '../support/processes';

interface Queue {
  entries: { number: number; status: string; title?: string }[];
  batches: { status: string; prNumbers: number[]; headSha?: string; checksUrl?: string; requiredChecks: { name: string; state: string }[] }[];
}

/**
 * `npm start` as a newcomer runs it (its entry, tools/ops/launch.cjs start, with NODE_ENV unset),
 * on a database and queue prefix of its own, with a demo CI that takes one second per run: quiet
 * logs and a readable banner last, then the demo queue's PRs land through the emulator's check
 * runs, the one made to fail fails, and the chain moves.
 */
describe('npm start (the demo)', () => {
  const shared = process.env.DATABASE_URL as string;
  const database = `${new URL(shared).pathname.slice(1)}_start_demo`;
  const tmp = mkdtempSync(join(tmpdir(), 'dpa-start-demo-'));
  const tokenFile = join(tmp, 'demo-token');
  let output = '';
  let port: number;
  let exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  let child: ReturnType<typeof spawn>;

  beforeAll(async () => {
    buildIfStale();
    const databaseUrl = await ensureDatabase(shared, database, { fresh: true });
    port = await freePort();
    // As a newcomer's shell: no NODE_ENV (npm start makes it development), no log or GitHub settings;
    // only where Postgres and Redis are, and free ports (suites run side by side).
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl,
      REDIS_URL: process.env.REDIS_URL,
      QUEUE_PREFIX: `dpa-start-demo-${process.pid}`,
      PORT: String(port),
      METRICS_PORT: '0',
      WORKER_HEALTH_PORT: '0',
      DEMO_TOKEN_FILE: tokenFile,
      DEMO_CI_SECONDS: '1',
    };
    child = spawn(process.execPath, ['tools/ops/launch.cjs', 'start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await eventually('the demo to finish', async () => /› demo: done:|could not be set up/.test(output) || child.exitCode !== null, {
      timeoutMs: 200_000,
      everyMs: 200,
    }).catch((error: Error) => {
      throw new Error(`${error.message}; npm start printed:\n${output}`);
    });
  }, 240_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGINT');
      await exit;
    }
    rmSync(tmp, { recursive: true, force: true });
    const admin = new Client({ connectionString: withDatabase(shared, 'postgres') });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).finally(() => admin.end());
  }, 60_000);

  const api = async <T>(path: string): Promise<T> => {
    const token = readFileSync(tokenFile, 'utf8').trim();
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: T }).data;
  };
  /** The demo queue, found as a client finds it (the banner's link may be a view link that does not name it). */
  const queueId = async () => (await api<{ id: string; repository: string }[]>('/merge-queues')).find((q) => q.repository === 'demo-user/checkout-service')?.id;

  it('prints nothing noisy: progress lines, then the banner (readable, with the queue link), then only the demo’s progress', () => {
    expect(output).toContain('› demo: done:');
    const lines = output.split('\n');
    const bannerStart = lines.indexOf('  Delivery Platform API is running (API + worker).');
    const bannerEnd = lines.indexOf('  Stop          Ctrl-C');
    expect(bannerStart).toBeGreaterThan(0);
    expect(bannerEnd).toBeGreaterThan(bannerStart);
    // Before it: only npm start's own `›` lines (the build is fresh), no JSON log and no boot line of the API or the worker.
    expect(lines.slice(0, bannerStart).filter((line) => line.trim() !== '' && !line.startsWith('› '))).toEqual([]);
    expect(output).not.toMatch(/^\{/m);
    expect(output).not.toMatch(/api listening|worker started|Nest application|RoutesResolver/);
    // The banner: labelled lines a person reads, the queue's link among them.
    const banner = lines.slice(bannerStart, bannerEnd + 1);
    expect(banner).toEqual(
      expect.arrayContaining([
        `  Swagger UI    http://localhost:${port}/docs`,
        expect.stringMatching(/^ {2}Demo token {4}dpa_\w+$/),
        // The queue's page (a view link) once the API serves them, its chain until then.
        expect.stringMatching(/^ {2}Merge queue {3}https?:\/\/\S+/),
        expect.stringMatching(/fails #3 "Round cart totals half-even" on purpose/),
      ]),
    );
    // After it: only the demo's progress.
    expect(lines.slice(bannerEnd + 1).filter((line) => line.trim() !== '' && !line.startsWith('› demo: '))).toEqual([]);
    expect(lines.slice(bannerEnd + 1).join('\n')).toMatch(/› demo: #3 "Round cart totals half-even" failed/);
  });

  it('through the API: the demo queue requires ci, its PRs land in order by the demo CI’s check runs, #3 fails and leaves, and the chain moves', async () => {
    const id = await queueId();
    expect(id).toBeDefined();
    const settings = await api<{ requiredChecks: { name: string; source: string }[] }>(`/merge-queues/${id}/settings`);
    expect(settings.requiredChecks).toEqual([{ name: 'ci', source: 'checkRun' }]);
    const queue = await api<Queue & { repository: string }>(`/merge-queues/${id}`);
    expect(queue.repository).toBe('demo-user/checkout-service');
    expect(queue.entries.map((e) => [e.number, e.status, e.title])).toEqual([
      [1, 'merged', 'Show prices with their currency symbol'],
      [2, 'merged', 'Free shipping from 50 €'],
      [3, 'failed', 'Round cart totals half-even'],
      [4, 'merged', 'Document the checkout API'],
    ]);
    const landed = queue.batches.filter((b) => b.status === 'landed');
    // The chain moved: each PR that merged landed on a candidate of its own or with others, in queue order, on distinct commits.
    expect(landed.flatMap((b) => b.prNumbers)).toEqual([1, 2, 4]);
    expect(new Set(landed.map((b) => b.headSha)).size).toBe(landed.length);
    // Every result came from the demo CI's check run `ci` (its details link is the emulator's Actions run).
    for (const b of landed) expect(b.requiredChecks).toEqual([{ name: 'ci', state: 'success' }]);
    for (const b of landed) expect(b.checksUrl).toMatch(/\/demo-user\/checkout-service\/actions\/runs\/\d+$/);
    const failed = queue.batches.filter((b) => b.status === 'failed');
    expect(failed.some((b) => b.prNumbers.includes(3) && b.requiredChecks.some((c) => c.name === 'ci' && c.state === 'failure'))).toBe(true);
    expect(failed.flatMap((b) => b.prNumbers).every((n) => n === 3 || n === 4)).toBe(true);
  });

  it('the banner’s queue link opens the demo queue’s page, with no API token', async () => {
    const id = await queueId();
    const link = (/^ {2}Merge queue {3}(https?:\/\/\S+)/m.exec(output) as RegExpExecArray)[1].replace('localhost', '127.0.0.1');
    expect(link).toContain(`/view/merge-queues/${id}/`);
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toMatch(/<h1>Merge queue demo-user(\/|&#47;)checkout-service/);
  });

  it('stops on Ctrl-C with exit 0', async () => {
    child.kill('SIGINT');
    expect(await exit).toEqual({ code: 0, signal: null });
  }, 60_000);
});
