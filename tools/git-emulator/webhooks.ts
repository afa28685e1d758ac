/**
 * Webhooks: building GitHub's deliveries (check_run, status, pull_request, push), signing them and
 * posting them to the configured URL, recorded for tests to read and redeliver.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { Pulls } from './pulls';
import type { EmulatedDelivery, EmulatedRepository, EmulatorState } from './state';

/** GitHub's X-Hub-Signature-256 of a body. */
export function signature256(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export class Webhooks {
  constructor(
    private readonly state: EmulatorState,
    private readonly pulls?: Pulls,
  ) {}

  /**
   * Sends a webhook delivery to `webhook.url`, signed with `webhook.secret` (or `options.secret`,
   * or the exact `options.signature`, or unsigned with `signature: null`), and records it.
   */
  async deliver(
    event: string,
    payload: Record<string, unknown>,
    options: { secret?: string; signature?: string | null; id?: string } = {},
  ): Promise<EmulatedDelivery> {
    const webhook = this.state.webhook;
    if (!webhook) throw new Error('the emulator has no webhook configured');
    const installationId = webhook.installationId ?? this.appInstallationOf(payload);
    const full = installationId !== undefined ? { ...payload, installation: { id: installationId } } : payload;
    const body = JSON.stringify(full);
    const secret = options.secret ?? (webhook.appSecret !== undefined && installationId !== undefined ? webhook.appSecret : webhook.secret);
    const signature = options.signature === undefined ? signature256(body, secret) : options.signature;
    return this.post({ id: options.id ?? randomUUID(), event, body, signature: signature ?? '', status: 0, response: '' });
  }

  /** Sends a recorded delivery again, byte for byte with its id (GitHub's "Redeliver"). */
  redeliver(id: string): Promise<EmulatedDelivery> {
    const original = this.state.deliveries.find((d) => d.id === id);
    if (!original) throw new Error(`no delivery ${id}`);
    return this.post({ ...original, status: 0, response: '' });
  }

  /** CI finished on `sha`: a check run `name` completed with `conclusion`, announced by a `check_run` webhook. */
  checkRunCompleted(
    repository: string,
    sha: string,
    name: string,
    conclusion: 'success' | 'failure' | 'neutral' | 'cancelled' | 'timed_out' | 'skipped',
    detailsUrl?: string,
    app: { id: number; slug: string } = { id: 1, slug: 'ci' },
  ): Promise<EmulatedDelivery> {
    return this.deliver('check_run', {
      action: 'completed',
      check_run: {
        id: this.state.nextId(),
        name,
        head_sha: sha,
        status: 'completed',
        conclusion,
        details_url: detailsUrl ?? `https://ci.example.test/${sha.slice(0, 12)}`,
        app,
      },
      repository: this.repoRef(repository),
    });
  }

  /** A commit status on `sha` (what a CI using the statuses API sends). */
  commitStatus(repository: string, sha: string, context: string, state: 'success' | 'failure' | 'error' | 'pending'): Promise<EmulatedDelivery> {
    return this.deliver('status', { sha, context, state, target_url: `https://ci.example.test/${sha.slice(0, 12)}`, repository: this.repoRef(repository) });
  }

  /** A pull request event: `synchronize` (a new head was pushed) or `closed`. */
  pullRequest(
    repository: string,
    action: 'synchronize' | 'closed' | 'opened',
    pr: { number: number; headSha: string; baseRef: string; merged?: boolean },
  ): Promise<EmulatedDelivery> {
    // The PR's head as GraphQL reports it (reviewDecision, headRefOid) moves with the event.
    if (action !== 'closed') this.pulls?.headMoved(repository, pr.number, pr.headSha);
    return this.deliver('pull_request', {
      action,
      number: pr.number,
      pull_request: {
        number: pr.number,
        state: action === 'closed' ? 'closed' : 'open',
        merged: pr.merged ?? false,
        head: { sha: pr.headSha, ref: `pr-${pr.number}` },
        base: { ref: pr.baseRef },
      },
      repository: this.repoRef(repository),
    });
  }

  /**
   * A push to a branch (sent by itself when the API moves a ref; a test sends one for a push from
   * outside). `commits`: that many entries in `commits` (GitHub lists up to 2,048), each shaped as
   * GitHub writes them (id, tree, message, timestamp, url, author and committer, added, removed and
   * modified paths), the last one also as `head_commit`.
   */
  push(repository: string, ref: string, before: string, after: string, pusher = 'someone', options: { commits?: number } = {}): Promise<EmulatedDelivery> {
    const commits = Array.from({ length: options.commits ?? 0 }, (_, i) =>
      this.pushedCommit(repository, i, i === (options.commits ?? 0) - 1 ? after : undefined),
    );
    return this.deliver('push', {
      ref,
      before,
      after,
      created: /^0+$/.test(before),
      deleted: /^0+$/.test(after),
      pusher: { name: pusher },
      repository: this.repoRef(repository),
      ...(commits.length > 0 && { commits, head_commit: commits[commits.length - 1] }),
    });
  }

  /** One entry of a push's `commits`, of about the size GitHub sends (a short message, a few paths). */
  private pushedCommit(repository: string, i: number, sha?: string): Record<string, unknown> {
    const id = sha ?? createHmac('sha1', repository).update(String(i)).digest('hex');
    const person = { name: 'Mona Octocat', email: 'mona@users.noreply.github.com', username: 'mona' };
    return {
      id,
      tree_id: createHmac('sha1', 'tree').update(id).digest('hex'),
      distinct: true,
      message: `Change ${i}: adjust the handling of case ${i} in the service layer\n\nSigned-off-by: Mona Octocat <mona@users.noreply.github.com>`,
      timestamp: new Date(Date.now() - (2_000 - i) * 60_000).toISOString(),
      url: `https://github.com/${repository}/commit/${id}`,
      author: person,
      committer: person,
      added: i % 5 === 0 ? [`src/modules/feature-${i}/handler-${i}.ts`] : [],
      removed: [],
      modified: [`src/modules/service/case-${i % 97}.ts`, `test/service/case-${i % 97}.spec.ts`],
    };
  }

  /** With the App's secret configured: the installation on the owner of the payload's repository, if any. */
  private appInstallationOf(payload: Record<string, unknown>): number | undefined {
    if (this.state.webhook?.appSecret === undefined) return undefined;
    const owner = String((payload.repository as { owner?: { login?: string } } | undefined)?.owner?.login ?? '').toLowerCase();
    for (const installation of this.state.installations.values()) if (installation.account.toLowerCase() === owner) return installation.id;
    return undefined;
  }

  /** Records a ref the API moved and, as GitHub, sends a push event for every branch update, whoever made it (the queue's own lands too). */
  refMoved(repo: EmulatedRepository, ref: string, before: string, after: string, by: string): void {
    const repository = `${repo.owner}/${repo.name}`;
    this.state.refMoves.push({ repository, ref, sha: after, by });
    if (this.state.webhook && ref.startsWith('refs/heads/')) void this.push(repository, ref, before, after, by).catch(() => undefined);
  }

  private repoRef(repository: string): Record<string, unknown> {
    const repo = this.state.repos.get(repository.toLowerCase());
    return {
      id: repo?.id ?? 0,
      full_name: repo ? `${repo.owner}/${repo.name}` : repository,
      name: repo?.name ?? repository.split('/')[1],
      owner: { login: repo?.owner ?? repository.split('/')[0] },
    };
  }

  private async post(delivery: EmulatedDelivery): Promise<EmulatedDelivery> {
    const target = this.state.webhook as { url: string };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/emulator',
      'x-github-event': delivery.event,
      'x-github-delivery': delivery.id,
    };
    if (delivery.signature) headers['x-hub-signature-256'] = delivery.signature;
    const res = await fetch(target.url, { method: 'POST', headers, body: delivery.body });
    delivery.status = res.status;
    delivery.response = await res.text();
    this.state.deliveries.push(delivery);
    return delivery;
  }
}
