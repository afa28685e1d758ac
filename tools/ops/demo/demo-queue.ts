/**
 * The demo's merge queue, made as a user would: the API's own routes (a GitHub integration on the
 * emulator, the repository as a code source, a queue on `main` requiring `ci`), pull requests as
 * GitHub has them (commits on branches of the emulator's bare repository, opened with titles and
 * approved), each then enqueued. Every `npm start` starts a new emulator, so the previous demo's
 * code source (with its queue) and integration are removed first.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmulatedRepository, GitProviderEmulator } from '@tools/git-emulator/emulator';
import { DEMO_CI_BREAKS } from './demo-ci';

export const DEMO_INTEGRATION_NAME = 'Demo GitHub (npm start)';

/** The demo's pull requests, in the order they are enqueued; the third one breaks the build. */
export const DEMO_PULL_REQUESTS: { title: string; files: Record<string, string>; breaks?: boolean }[] = [
  {
    title: 'Show prices with their currency symbol',
    files: { 'src/price.ts': "export const price = (cents: number, currency = '€') => `${currency}${(cents / 100).toFixed(2)}`;\n" },
  },
  {
    title: 'Free shipping from 50 €',
    files: { 'src/shipping.ts': 'export const shipping = (totalCents: number) => (totalCents >= 5000 ? 0 : 490);\n' },
  },
  {
    title: 'Round cart totals half-even',
    files: { 'src/cart.ts': `export const total = (items: number[]) => Math.round(items.reduce((a, b) => a + b, 0)); // ${DEMO_CI_BREAKS}\n` },
    breaks: true,
  },
  {
    title: 'Document the checkout API',
    files: { 'docs/checkout.md': '# Checkout\n\nPOST /orders places an order.\n' },
  },
];

const BASE_FILES: Record<string, string> = {
  'README.md': '# checkout-service\n\nA demo repository served by the local GitHub emulator.\n',
  'src/cart.ts': 'export const total = (items: number[]) => items.reduce((a, b) => a + b, 0);\n',
  'src/price.ts': 'export const price = (cents: number) => (cents / 100).toFixed(2);\n',
};

const PEOPLE = { GIT_AUTHOR_NAME: 'Demo User', GIT_AUTHOR_EMAIL: 'demo-user@users.noreply.emulator.test' };

/** A commit on `parent` with `files` written (at any depth), built in a temporary index: no work tree. */
function commitFiles(path: string, parent: string, files: Record<string, string>, message: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'dpa-demo-index-'));
  const env = {
    ...process.env,
    ...PEOPLE,
    GIT_COMMITTER_NAME: PEOPLE.GIT_AUTHOR_NAME,
    GIT_COMMITTER_EMAIL: PEOPLE.GIT_AUTHOR_EMAIL,
    GIT_INDEX_FILE: join(dir, 'index'),
  };
  const git = (args: string[], input?: string) => execFileSync('git', ['--git-dir', path, ...args], { env, input, encoding: 'utf8' }).trim();
  try {
    git(['read-tree', parent]);
    const lines = Object.entries(files).map(([file, content]) => `100644 ${git(['hash-object', '-w', '--stdin'], content)}\t${file}`);
    git(['update-index', '--index-info'], `${lines.join('\n')}\n`);
    return git(['commit-tree', git(['write-tree']), '-p', parent, '-m', message]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

class ApiClient {
  constructor(
    readonly base: string,
    private readonly token: string,
  ) {}

  async call<T>(method: string, path: string, data?: unknown, okStatuses = [200, 201, 204]): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json' },
      ...(data !== undefined && { body: JSON.stringify({ data }) }),
    });
    const text = await res.text();
    const body = (text ? JSON.parse(text) : undefined) as T;
    if (!okStatuses.includes(res.status)) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
    return { status: res.status, body };
  }
}

export interface DemoQueue {
  queueId: string;
  repository: EmulatedRepository;
  /** PR number → title. */
  titles: Map<number, string>;
  /** The PR made to fail. */
  failing: number;
  api: ApiClient;
}

/**
 * Seeds the demo queue on `repository` (`owner/name` on the emulator, owned by `login`) through the
 * API at `apiBase`, and points the emulator's webhook at the API. Returns once every PR is enqueued.
 */
export async function seedDemoQueue(
  provider: GitProviderEmulator,
  options: {
    apiBase: string;
    token: string;
    login: string;
    userToken: string;
    repository: EmulatedRepository;
    reviewer: string;
    queueSettings?: Record<string, unknown>;
  },
): Promise<DemoQueue> {
  const api = new ApiClient(options.apiBase, options.token);
  const fullName = `${options.repository.owner}/${options.repository.name}`;
  const path = options.repository.path;

  // The previous start's demo: its code sources (their queues go with them), then the integration.
  const integrations = await api.call<{ data: { id: string; name: string }[] }>('GET', '/integrations?limit=100');
  for (const old of integrations.body.data.filter((i) => i.name === DEMO_INTEGRATION_NAME)) {
    const sources = await api.call<{ data: { id: string; integrationId?: string }[] }>('GET', '/code-sources?limit=100');
    for (const source of sources.body.data.filter((s) => s.integrationId === old.id)) await api.call('DELETE', `/code-sources/${source.id}`);
    await api.call('DELETE', `/integrations/${old.id}`);
  }

  const git = (...args: string[]) => execFileSync('git', ['--git-dir', path, ...args], { encoding: 'utf8' }).trim();
  const initial = git('rev-parse', `refs/heads/${options.repository.defaultBranch}`);
  const main = commitFiles(path, initial, BASE_FILES, 'Checkout service: cart and prices');
  git('update-ref', `refs/heads/${options.repository.defaultBranch}`, main, initial);

  const integration = await api.call<{ data: { id: string; webhookSecret: string } }>('POST', '/integrations', {
    provider: 'GITHUB',
    authMethod: 'API_TOKEN',
    name: DEMO_INTEGRATION_NAME,
    token: options.userToken,
  });
  // The repository's webhook, as a user adds it on GitHub: the API's intake, the integration's secret.
  provider.webhook = { url: `${options.apiBase}/webhooks/github`, secret: integration.body.data.webhookSecret };
  const source = await api.call<{ data: { id: string } }>('POST', '/code-sources', { integrationId: integration.body.data.id, repository: fullName });
  const queue = await api.call<{ data: { id: string } }>('POST', '/merge-queues', {
    codeSourceId: source.body.data.id,
    baseRef: options.repository.defaultBranch,
    requiredChecks: ['ci'],
    maxBatch: 2,
    flakyRetries: 0,
    checkTimeoutSeconds: 600,
    ...options.queueSettings,
  });
  const queueId = queue.body.data.id;

  const titles = new Map<number, string>();
  let failing = 0;
  for (const [i, pr] of DEMO_PULL_REQUESTS.entries()) {
    const number = i + 1;
    const head = commitFiles(path, main, pr.files, pr.title);
    // The emulator names a PR's head branch pr-<number> (its webhooks say so).
    git('update-ref', `refs/heads/pr-${number}`, head);
    provider.pull(fullName, number, head).title = pr.title;
    await provider.pullRequest(fullName, 'opened', { number, headSha: head, baseRef: options.repository.defaultBranch });
    provider.review(fullName, number, options.reviewer, 'APPROVED', head);
    titles.set(number, pr.title);
    if (pr.breaks) failing = number;
    await api.call('POST', `/merge-queues/${queueId}/entries`, { number, headSha: head, url: `${provider.url}/${fullName}/pull/${number}`, title: pr.title });
  }
  return { queueId, repository: options.repository, titles, failing, api };
}

/**
 * The queue page's link for the banner: a signed view link (POST /merge-queues/{id}/view-links,
 * `data.url`), which a browser opens with no API token.
 */
export async function queuePageLink(demo: DemoQueue): Promise<string> {
  const link = await demo.api.call<{ data: { url: string } }>('POST', `/merge-queues/${demo.queueId}/view-links`, {});
  return link.body.data.url;
}
