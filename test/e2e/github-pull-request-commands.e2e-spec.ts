import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import type { PrismaService } from '@/common/prisma/prisma.service';
import type { GitProviderEmulator } from '../support/git';
import { commit, git } from '../support/git-repos';
import { appInstallationIntegration, type GithubQueueSuite, githubQueueSuite } from '../support/github-queues';
import { until } from '../support/processes';

const TEST_TIMEOUT_MS = 90_000;
/** The GitHub App's one webhook secret (GITHUB_APP_WEBHOOK_SECRET): every delivery of the App is signed with it. */
const APP_SECRET = 'app-webhook-secret-pr-commands-0123456789';
const APP_ID = '4343';

type Json = Record<string, any>;

/** GitHub's own example deliveries (`@octokit/webhooks-examples`, api.github.com), by event. */
const EXAMPLES = JSON.parse(
  readFileSync(join(__dirname, '..', '..', 'node_modules', '@octokit', 'webhooks-examples', 'api.github.com', 'index.json'), 'utf8'),
) as { name: string; examples: Json[] }[];

/** A deep copy of GitHub's first example of `event` with `action`. */
function example(event: string, action: string): Json {
  const found = EXAMPLES.find((e) => e.name === event)?.examples.find((x) => x.action === action);
  if (!found) throw new Error(`no example ${event} ${action}`);
  return structuredClone(found);
}

/**
 * Enqueue and dequeue from the pull request (issue 39 point 1): GitHub's example deliveries
 * (`pull_request` labeled/unlabeled, `issue_comment` created), rewritten only in their identifiers
 * (repository, PR number, label, sender, comment id) and dated today, sent as the GitHub App sends
 * them (the installation's id, signed with the App's secret) to POST /webhooks/github; the
 * in-process worker asks the emulator (as the App's installation) for the person's permission, the
 * PR and its review decision, and answers on the PR.
 */
describe('enqueue from the pull request: labels and /queue /dequeue comments (GitHub App deliveries, in-process worker)', () => {
  let suite: GithubQueueSuite;
  let emulator: GitProviderEmulator;
  let prisma: PrismaService;
  let login: string;
  let integrationId: string;
  const appKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const http = () => request(suite.app.getHttpServer());

  beforeAll(async () => {
    suite = await githubQueueSuite('pr_commands', {
      listen: true,
      config: (base, started) => {
        started.app = { appId: APP_ID, publicKey: appKeys.publicKey };
        const privateKey = appKeys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
        return {
          ...base,
          git: { ...base.git, github: { ...base.git.github, app: { appId: APP_ID, privateKey } } },
          webhooks: { ...base.webhooks, appSecrets: [APP_SECRET] },
        };
      },
    });
    ({ emulator, prisma } = suite);
    login = `pr-owner-${randomUUID().slice(0, 8)}`;
    emulator.addUser(login);
    integrationId = (await appInstallationIntegration(suite.app, emulator, suite.owner, login)).id;
    const { port } = suite.app.getHttpServer().address() as AddressInfo;
    // The App's webhook: deliveries about the installation's repositories carry its id and are signed with the App's secret.
    emulator.webhook = { url: `http://127.0.0.1:${port}/webhooks/github`, secret: suite.github.webhookSecret, appSecret: APP_SECRET };
  }, 60_000);

  afterAll(async () => {
    if (suite) suite.emulator.webhook = undefined;
    await suite?.close();
  });

  /** A repository of the installation's account with a queue on main (its settings as given), and people of each role. */
  async function queue(settings: Record<string, unknown> = {}) {
    const name = `repo-${randomUUID().slice(0, 8)}`;
    const { path, id } = emulator.addRepository(login, name);
    const repository = `${login}/${name}`;
    const main = commit(path, git(path, 'rev-parse', 'main'), { 'README.md': 'hello\n' }, 'initial');
    git(path, 'update-ref', 'refs/heads/main', main);
    git(path, 'update-ref', 'refs/heads/dev', main);
    const source = await http().post('/code-sources').set(suite.owner.auth).send({ data: { integrationId, repository } }).expect(201);
    const created = await http()
      .post('/merge-queues')
      .set(suite.owner.auth)
      .send({
        data: {
          codeSourceId: source.body.data.id,
          baseRef: 'main',
          requiredChecks: ['ci'],
          checkTimeoutSeconds: 600,
          settings: { enqueueLabel: 'queue', ...settings },
        },
      })
      .expect(201);
    const writer = `writer-${randomUUID().slice(0, 6)}`;
    const reader = `reader-${randomUUID().slice(0, 6)}`;
    emulator.addUser(writer);
    emulator.addUser(reader);
    emulator.setRole(repository, writer, 'write');
    emulator.setRole(repository, reader, 'read');
    return { repository, repositoryId: id, path, main, queueId: created.body.data.id as string, writer, reader };
  }

  type Queue = Awaited<ReturnType<typeof queue>>;

  /** An open PR `number` on `q`'s repository, approved by the owner unless told, with its own head commit. */
  function pullRequest(q: Queue, number: number, fields: { draft?: boolean; baseRef?: string; state?: 'open' | 'closed'; approved?: boolean } = {}) {
    const headSha = commit(q.path, q.main, { [`pr-${number}.txt`]: `${number}\n` }, `PR ${number}`);
    const title = `Widgets learn trick ${number}`;
    emulator.setPullRequest(q.repository, number, {
      headSha,
      title,
      baseRef: fields.baseRef ?? 'main',
      draft: fields.draft ?? false,
      state: fields.state ?? 'open',
    });
    if (fields.approved !== false) emulator.review(q.repository, number, login, 'APPROVED');
    return { number, headSha, title };
  }

  /** GitHub's example pointed at the queue's repository (its name, id and owner). */
  function pointed(payload: Json, q: Queue): Json {
    payload.repository.full_name = q.repository;
    payload.repository.name = q.repository.split('/')[1];
    payload.repository.id = q.repositoryId;
    payload.repository.owner.login = login;
    return payload;
  }

  /** GitHub's `pull_request` labeled (unlabeled) example: `sender` added (removed) `label` on PR `number`. */
  function labelPayload(q: Queue, number: number, sender: string, label = 'queue', action: 'labeled' | 'unlabeled' = 'labeled'): Json {
    const payload = pointed(example('pull_request', action), q);
    const pull = emulator.pullRequestOf(q.repository, number);
    payload.number = number;
    payload.pull_request.number = number;
    payload.pull_request.base.ref = pull?.baseRef ?? 'main';
    payload.pull_request.head.sha = pull?.headSha ?? q.main;
    payload.pull_request.updated_at = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    payload.label.name = label;
    payload.sender.login = sender;
    return payload;
  }

  /**
   * GitHub's `issue_comment` created example on PR `number` by `author` (the example is on an issue:
   * a comment on a PR carries `issue.pull_request`, as GitHub sends it); the comment is also put on
   * the emulator's PR, so a reaction to it finds it.
   */
  function commentPayload(q: Queue, number: number, author: string, body: string): Json {
    const payload = pointed(example('issue_comment', 'created'), q);
    const id = emulator.nextId();
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    payload.issue.number = number;
    payload.issue.pull_request = { url: `${emulator.url}/repos/${q.repository}/pulls/${number}`, html_url: `${emulator.url}/${q.repository}/pull/${number}` };
    Object.assign(payload.comment, { id, body, created_at: now, updated_at: now });
    payload.comment.user.login = author;
    payload.sender.login = author;
    emulator.pullRequestOf(q.repository, number)?.comments.push({ id, by: author, body, at: now, reactions: [] });
    return payload;
  }

  /** Sends the delivery as the App would and waits until the worker applied it; its stored outcome. */
  async function send(event: string, payload: Json) {
    const delivery = await emulator.deliver(event, payload);
    expect({ status: delivery.status, response: delivery.status === 202 ? '' : delivery.response }).toEqual({ status: 202, response: '' });
    const row = await until(`delivery ${delivery.id} applied`, async () =>
      prisma.webhookDelivery.findFirst({ where: { integrationId, deliveryId: delivery.id, processedAt: { not: null } } }),
    );
    return { delivery, outcome: row.outcome ?? '' };
  }

  const entriesOf = (queueId: string, number: number) => prisma.mergeQueueEntry.findMany({ where: { queueId, number }, orderBy: { createdAt: 'asc' } });
  /** The comments the App (its bot) wrote on PR `number`. */
  const answers = (q: Queue, number: number) =>
    (emulator.pullRequestOf(q.repository, number)?.comments ?? []).filter((c) => c.by === emulator.botLogin).map((c) => c.body);

  it(
    "a writer's label enqueues the PR's head with its title and origin; a redelivery and a /queue for it leave one entry; removing the label dequeues",
    async () => {
      const q = await queue();
      const pr = pullRequest(q, 11);
      const { delivery, outcome } = await send('pull_request', labelPayload(q, 11, q.writer));
      expect(outcome).toMatch(/applied \(#11 queued with head/);
      const [entry] = await entriesOf(q.queueId, 11);
      expect(entry).toMatchObject({ headSha: pr.headSha, title: pr.title, status: expect.stringMatching(/queued|testing/) });
      expect(entry.url).toBe(`${emulator.url}/${q.repository}/pull/11`);
      expect(entry.origin).toEqual({ via: 'label', actor: q.writer, actorKind: 'github' });
      // The entry's details (the queue's own resource) show how it came and whose title it carries.
      expect(await suite.mq.details(q.queueId, entry.id)).toMatchObject({
        origin: { via: 'label', actor: q.writer, actorKind: 'github' },
        title: pr.title,
        titleSource: 'github',
      });
      // The enqueue event records it too.
      const event = await prisma.mergeQueueEvent.findFirst({ where: { queueId: q.queueId, type: 'enqueue' } });
      expect(event?.detail).toMatchObject({ number: 11, origin: { via: 'label', actor: q.writer, actorKind: 'github' }, deliveryId: delivery.id });
      // GitHub redelivers the same delivery: stored once, applied once.
      const again = await emulator.redeliver(delivery.id);
      expect(JSON.parse(again.response)).toMatchObject({ data: { duplicate: true } });
      // The same person also comments /queue: acknowledged, still one entry.
      const queueComment = commentPayload(q, 11, q.writer, '/queue');
      const second = await send('issue_comment', queueComment);
      expect(second.outcome).toMatch(/#11 is already in the queue/);
      expect(await entriesOf(q.queueId, 11)).toHaveLength(1);
      expect(emulator.pullRequestOf(q.repository, 11)?.comments.find((c) => c.id === queueComment.comment.id)?.reactions).toEqual([
        expect.objectContaining({ content: 'rocket', by: emulator.botLogin }),
      ]);
      expect(answers(q, 11)).toEqual([]);
      // Removing the label removes the entry, saying who.
      const removed = await send('pull_request', labelPayload(q, 11, q.writer, 'queue', 'unlabeled'));
      expect(removed.outcome).toMatch(/applied \(#11 dequeued by @writer-\w+ \(label queue removed\)\)/);
      expect(await entriesOf(q.queueId, 11)).toEqual([expect.objectContaining({ status: 'removed', block: `dequeued by @${q.writer} (label queue removed)` })]);
      // Another label does nothing and asks GitHub nothing.
      const other = await send('pull_request', labelPayload(q, 11, q.writer, 'bug'));
      expect(other.outcome).toBe('ignored: the label bug enqueues on no queue of the repository');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a reader's label is refused with an answer on the PR, and so is a reader's unlabel of a queued PR",
    async () => {
      const q = await queue();
      pullRequest(q, 12);
      const { outcome } = await send('pull_request', labelPayload(q, 12, q.reader));
      expect(outcome).toMatch(/unchanged \(#12 refused \(label by @reader-\w+\): @reader-\w+ has `read` permission/);
      expect(await entriesOf(q.queueId, 12)).toEqual([]);
      expect(answers(q, 12)).toEqual([
        `@${q.reader}: the merge queue did not queue this pull request (adding the label \`queue\`): @${q.reader} has \`read\` permission on ${q.repository}, and the merge queue takes requests only from people with write, maintain or admin permission.\n\nOnce that is fixed, remove the label \`queue\` and add it again.`,
      ]);
      // The answer is itself a comment GitHub announces (issue_comment created, by the App's bot): ignored, no loop.
      const own = await until('the answer’s own delivery applied', async () =>
        (await prisma.webhookDelivery.findMany({ where: { integrationId, event: 'issue_comment', processedAt: { not: null } } })).find((d) =>
          emulator.deliveries.some((x) => x.id === d.deliveryId && x.body.includes(`"number":12`) && x.body.includes(emulator.botLogin)),
        ),
      );
      expect(own.outcome).toBe('ignored: a comment by a bot or an app (the queue answers none)');
      expect(answers(q, 12)).toHaveLength(1);
      // A writer queues it; the reader's unlabel leaves it queued, and says so.
      await send('pull_request', labelPayload(q, 12, q.writer));
      await send('pull_request', labelPayload(q, 12, q.reader, 'queue', 'unlabeled'));
      expect((await entriesOf(q.queueId, 12)).map((e) => e.status)).not.toContain('removed');
      expect(answers(q, 12)[1]).toMatch(/did not remove this pull request from the queue \(removing the label `queue`\).*It stays in the queue\./s);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an unapproved PR is refused while the queue requires approval, and accepted once requireApproval is false',
    async () => {
      const q = await queue();
      pullRequest(q, 13, { approved: false });
      const refused = await send('pull_request', labelPayload(q, 13, q.writer));
      expect(refused.outcome).toMatch(/#13 refused .*review decision is REVIEW_REQUIRED/);
      expect(await entriesOf(q.queueId, 13)).toEqual([]);
      expect(answers(q, 13)).toEqual([
        expect.stringMatching(/review decision is REVIEW_REQUIRED, and this queue requires an approved pull request; get an approving review first/),
      ]);
      await http()
        .patch(`/merge-queues/${q.queueId}/settings`)
        .set(suite.owner.auth)
        .send({ data: { requireApproval: false } })
        .expect(200);
      const accepted = await send('pull_request', labelPayload(q, 13, q.writer));
      expect(accepted.outcome).toMatch(/applied \(#13 queued/);
      expect(await entriesOf(q.queueId, 13)).toHaveLength(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    '/queue and /dequeue comments by a writer queue and remove the PR (origin comment, reactions); a reader’s /dequeue is refused with an answer',
    async () => {
      const q = await queue();
      const pr = pullRequest(q, 14);
      const queued = commentPayload(q, 14, q.writer, '/queue\r\nit is approved');
      const first = await send('issue_comment', queued);
      expect(first.outcome).toMatch(/applied \(#14 queued with head/);
      expect(await entriesOf(q.queueId, 14)).toEqual([
        expect.objectContaining({ headSha: pr.headSha, title: pr.title, origin: { via: 'comment', actor: q.writer, actorKind: 'github' } }),
      ]);
      const reactionsOn = (id: number) =>
        emulator
          .pullRequestOf(q.repository, 14)
          ?.comments.find((c) => c.id === id)
          ?.reactions.map((r) => `${r.by} ${r.content}`);
      expect(reactionsOn(queued.comment.id)).toEqual([`${emulator.botLogin} rocket`]);
      const readerDequeue = commentPayload(q, 14, q.reader, '/dequeue');
      await send('issue_comment', readerDequeue);
      expect(answers(q, 14)).toEqual([
        expect.stringMatching(new RegExp(`^@${q.reader}: the merge queue did not remove this pull request from the queue \\(the comment \`/dequeue\`\\)`)),
      ]);
      const dequeued = commentPayload(q, 14, q.writer, '  /dequeue  ');
      const removed = await send('issue_comment', dequeued);
      expect(removed.outcome).toMatch(/#14 dequeued by @writer-\w+ \(\/dequeue\)/);
      expect((await entriesOf(q.queueId, 14)).map((e) => e.status)).toEqual(['removed']);
      expect(reactionsOn(dequeued.comment.id)).toEqual([`${emulator.botLogin} +1`]);
      // A comment that is not a command (or a bot's, such as the queue's own answers) is ignored.
      const chat = await send('issue_comment', commentPayload(q, 14, q.writer, 'please /queue this'));
      expect(chat.outcome).toBe('ignored: a comment that is no command');
      // /dequeue of a PR not in the queue is answered.
      await send('issue_comment', commentPayload(q, 14, q.writer, '/dequeue'));
      expect(answers(q, 14).at(-1)).toMatch(/did not remove this pull request from the queue \(the comment `\/dequeue`\): it is not in the queue\./);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a draft, a PR on another base and a closed PR are refused, each with an answer on the PR',
    async () => {
      const q = await queue();
      pullRequest(q, 15, { draft: true });
      pullRequest(q, 16, { baseRef: 'dev' });
      pullRequest(q, 17, { state: 'closed' });
      await send('pull_request', labelPayload(q, 15, q.writer));
      await send('issue_comment', commentPayload(q, 16, q.writer, '/queue'));
      await send('pull_request', labelPayload(q, 17, q.writer));
      expect(await prisma.mergeQueueEntry.count({ where: { queueId: q.queueId } })).toBe(0);
      expect(answers(q, 15)).toEqual([expect.stringMatching(/\(adding the label `queue`\): the pull request is a draft; mark it ready for review first\./)]);
      expect(answers(q, 16)).toEqual([
        expect.stringMatching(
          /\(the comment `\/queue`\): its base is `dev`, and the merge queue takes pull requests into `main` only; change the base first\.\n\nOnce that is fixed, comment `\/queue` again\./,
        ),
      ]);
      expect(answers(q, 17)).toEqual([expect.stringMatching(/\(adding the label `queue`\): the pull request is closed\./)]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'commentCommands false: /queue and /dequeue comments are ignored (no entry, no answer); the label still works',
    async () => {
      const q = await queue({ commentCommands: false });
      pullRequest(q, 18);
      const { outcome } = await send('issue_comment', commentPayload(q, 18, q.writer, '/queue'));
      expect(outcome).toBe('ignored: no queue of the repository takes comment commands');
      expect(await entriesOf(q.queueId, 18)).toEqual([]);
      expect(answers(q, 18)).toEqual([]);
      await send('pull_request', labelPayload(q, 18, q.writer));
      expect(await entriesOf(q.queueId, 18)).toHaveLength(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'GitHub failing while a label is decided: the delivery is retried (not answered, not dropped) and the PR is queued once GitHub answers',
    async () => {
      const q = await queue();
      pullRequest(q, 20);
      // The next three calls to the PR's conversation (the permission, then whatever a refusal would post) answer 502.
      emulator.knobs.conversationFailures = 3;
      const { delivery, outcome } = await send('pull_request', labelPayload(q, 20, q.writer));
      expect(emulator.knobs.conversationFailures).toBe(0);
      expect(outcome).toMatch(/applied \(#20 queued with head/);
      expect(await entriesOf(q.queueId, 20)).toHaveLength(1);
      expect(answers(q, 20)).toEqual([]);
      // Asked three times before it answered: the job was retried, the delivery applied once.
      const asked = emulator.requests.filter((r) => r.path === `/repos/${q.repository}/collaborators/${q.writer}/permission`);
      expect(asked.length).toBe(4);
      expect(await prisma.webhookDelivery.count({ where: { integrationId, deliveryId: delivery.id } })).toBe(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an API enqueue records its origin too: the principal, on the entry and in the enqueue event',
    async () => {
      const q = await queue();
      const head = commit(q.path, q.main, { 'pr-19.txt': '19\n' }, 'PR 19');
      const entry = await suite.mq.enqueue(q.queueId, 19, head);
      const origin = { via: 'api', actor: suite.owner.memberId, actorKind: 'principal' };
      expect((await prisma.mergeQueueEntry.findUniqueOrThrow({ where: { id: entry.id } })).origin).toEqual(origin);
      expect((await suite.mq.details(q.queueId, entry.id)).origin).toEqual(origin);
      expect((await prisma.mergeQueueEvent.findFirst({ where: { queueId: q.queueId, type: 'enqueue' } }))?.detail).toMatchObject({ entryId: entry.id, origin });
    },
    TEST_TIMEOUT_MS,
  );
});
