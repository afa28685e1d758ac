import { drawQueue, formatDuration, type QueuePicture } from './queue-picture';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const ahead = (ms: number) => new Date(NOW + ms).toISOString();

const queue: QueuePicture = {
  id: '0195a3c2-0000-7000-8000-000000000001',
  repository: 'acme/shop',
  baseRef: 'main',
  baseSha: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
  status: 'active',
  revision: '42',
  batchDepth: 4,
  maxParallel: 2,
  ciDurationMs: 27 * 60_000,
  now: new Date(NOW).toISOString(),
  batches: [
    {
      id: 'b1b1b1b1-aaaa',
      role: 'chain',
      prNumbers: [12, 15],
      status: 'ready',
      requiredChecks: [
        { name: 'ci', state: 'success' },
        { name: 'lint', state: 'success' },
      ],
      createdAt: ago(30 * 60_000),
      ciStartedAt: ago(28 * 60_000),
      estimatedLandAt: ahead(5_000),
    },
    {
      id: 'b2b2b2b2-bbbb',
      role: 'chain',
      parentId: 'b1b1b1b1-aaaa',
      prNumbers: [17],
      status: 'testing',
      requiredChecks: [
        { name: 'ci', state: 'failure' },
        { name: 'lint', state: 'pending' },
      ],
      createdAt: ago(95_000),
      ciStartedAt: ago(65_000),
      estimatedLandAt: ahead(26 * 60_000),
    },
    {
      id: 'b3b3b3b3-cccc',
      role: 'part',
      prNumbers: [20],
      status: 'preparing',
      requiredChecks: [],
      operation: { kind: 'prepare', outcome: 'running' },
      createdAt: ago(2_000),
    },
  ],
  waiting: [
    {
      number: 31,
      title: 'Hotfix checkout',
      status: 'queued',
      priority: 100,
      setAside: false,
      enqueuedAt: ago(60_000),
      estimatedMergeAt: ahead(3 * 3600_000 + 5 * 60_000),
    },
    {
      number: 22,
      title: 'Refactor cart',
      status: 'blocked',
      priority: 0,
      setAside: false,
      block: 'Merge conflict while building candidate b9: #22 conflicts with #17 in cart.ts',
      enqueuedAt: ago(10 * 60_000),
    },
    { number: 23, status: 'queued', priority: 0, setAside: true, enqueuedAt: ago(45_000) },
  ],
};

describe(drawQueue.name, () => {
  const text = drawQueue(queue);
  const lines = text.split('\n');

  it('heads the picture with the repository, base, status and revision', () => {
    expect(lines[0]).toBe(`merge queue ${queue.id}`);
    expect(lines[1]).toContain('acme/shop ⇢ main');
    expect(lines[1]).toContain('ACTIVE');
    expect(lines[1]).toContain('revision 42');
    expect(lines[1]).toContain('CI ~27m00s');
    expect(text).toContain('● main @ a1b2c3d4e5f6');
  });

  it('draws the chain in landing order with PRs, checks, operation, age, CI time and expected landing', () => {
    const chain = lines.filter((l) => /^[├└]─/.test(l));
    expect(chain).toHaveLength(3);
    expect(chain[0]).toMatch(/^├─● +b1b1b1b1 +chain +ready +#12 #15 +✓ ci ✓ lint +age 30m00s +CI 28m00s +lands ~5s$/);
    expect(chain[1]).toMatch(/^├─● +b2b2b2b2 +chain +testing +#17 +✗ ci … lint +age 1m35s +CI 1m05s +lands ~26m00s$/);
    // An isolation probe on the base, with its operation in flight; the last line closes the tree.
    expect(chain[2]).toMatch(/^└─◇ +b3b3b3b3 +probe +preparing +#20 +- +prepare:running +age 2s$/);
  });

  it('says how many tests a batch holding suspects should run first (fail-first hints)', () => {
    const hinted = drawQueue({ ...queue, batches: [queue.batches[0], { ...queue.batches[2], failFirst: 3 }] }).split('\n');
    const chain = hinted.filter((l) => /^[├└]─/.test(l));
    expect(chain[0]).toMatch(/lands ~5s$/);
    expect(chain[1]).toMatch(/^└─◇ +b3b3b3b3 +probe +preparing +#20 +- +prepare:running +age 2s +3 to run first$/);
    expect(lines.some((l) => l.includes('to run first'))).toBe(false);
  });

  it('lists the waiting entries in the given order with status, priority, wait and ETA; blocked ones say why', () => {
    const start = lines.indexOf('waiting (3)');
    expect(start).toBeGreaterThan(0);
    expect(lines[start + 1]).toMatch(/^ {2}PR +status +priority +waiting +ETA +title$/);
    expect(lines[start + 2]).toMatch(/^ {2}#31 +queued +100 +1m00s +~3h05m +Hotfix checkout$/);
    expect(lines[start + 3]).toMatch(
      /^ {2}#22 +blocked +0 +10m00s +- +Refactor cart — Merge conflict while building candidate b9: #22 conflicts with #17 in cart\.ts$/,
    );
    expect(lines[start + 4]).toMatch(/^ {2}#23 +set aside +0 +45s +-$/);
  });

  it("with path groups, shows how the waiting PRs fall into lanes and each PR's lanes", () => {
    const laned = drawQueue({
      ...queue,
      pathGroups: [{ name: 'api' }, { name: 'web' }],
      batches: [
        { ...queue.batches[0], lanes: ['api', 'web'] },
        { ...queue.batches[1], lanes: ['web'] },
      ],
      waiting: [
        { ...queue.waiting[0], lanes: ['api'] },
        { ...queue.waiting[1], lanes: ['api', 'web'] },
        { ...queue.waiting[2], lanes: ['web'] },
        { number: 40, status: 'queued', priority: 0, setAside: false, enqueuedAt: ago(1_000), lanes: ['api'] },
      ],
    }).split('\n');
    const start = laned.indexOf('waiting (4)');
    expect(laned.slice(start + 1, start + 4)).toEqual([`  lane api  ${'█'.repeat(20)} 3`, `  lane web  ${'█'.repeat(14)} 2`, '  1 of 4 span several lanes']);
    expect(laned[start + 4]).toMatch(/^ {2}PR +status +priority +waiting +ETA +lanes +title$/);
    expect(laned[start + 5]).toMatch(/^ {2}#31 +queued +100 +1m00s +~3h05m +api +Hotfix checkout$/);
    expect(laned[start + 6]).toMatch(/^ {2}#22 +blocked +0 +10m00s +- +all +Refactor cart/);
    expect(laned[start + 7]).toMatch(/^ {2}#23 +set aside +0 +45s +- +web$/);
    const chain = laned.filter((l) => /^[├└]─/.test(l));
    expect(chain[0]).toMatch(/^├─● +b1b1b1b1 +chain +ready +#12 #15 +all +✓ ci ✓ lint/);
    expect(chain[1]).toMatch(/^└─● +b2b2b2b2 +chain +testing +#17 +web +✗ ci/);
    // Without path groups the table has no lanes column and no summary.
    expect(text).not.toContain('lane ');
  });

  it('says so when nothing is in flight or waiting, and shows a move to a new base ref', () => {
    const empty = drawQueue({ ...queue, status: 'migrating', pendingBaseRef: 'release', batches: [], waiting: [] });
    expect(empty).toContain('acme/shop ⇢ main → release   MIGRATING');
    expect(empty).toContain('(no batch in flight)');
    expect(empty).toContain('waiting (0)\n  (none)');
  });
  it('strips terminal control characters from everything the server sent (a title cannot drive the terminal)', () => {
    const hostile = drawQueue({
      ...queue,
      repository: 'acme/\u001b]0;owned\u0007shop',
      baseRef: 'main\u001b[2J',
      batches: [{ ...queue.batches[0], requiredChecks: [{ name: 'ci\u001b[31m', state: 'success' }] }],
      waiting: [{ ...queue.waiting[0], title: 'Fix\u001b[2J\u001b[H\rowned\u0008\u009b31m\u202eevil\nnext', block: 'why\u0007' }],
    });
    // No C0 control (but the picture's own newlines), no DEL, no C1 control, no bidi override.
    expect(hostile.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(hostile).toContain('acme/]0;ownedshop ⇢ main[2J');
    expect(hostile).toContain('Fix[2J[H owned31mevil next — why');
  });
});

describe(formatDuration.name, () => {
  it.each([
    [-5, 'now'],
    [0, 'now'],
    [4_400, '4s'],
    [65_000, '1m05s'],
    [3_600_000, '1h00m'],
    [50 * 3_600_000, '2d02h'],
  ])('%d ms reads %s', (ms, text) => expect(formatDuration(ms)).toBe(text));

  it('says right under the status why a queue stopped by itself, and how to go on', () => {
    const held = drawQueue({
      ...queue,
      status: 'paused',
      hold: { kind: 'landRefused', reason: 'Protected branch update failed for refs/heads/main.', since: ago(3 * 60_000), prNumbers: [12, 15] },
    }).split('\n');
    expect(held[1]).toContain('PAUSED');
    expect(held[2]).toBe('⚠ stopped 3m00s ago, landing refused by the provider (#12 #15): Protected branch update failed for refs/heads/main.');
    expect(held[3]).toContain(`/merge-queues/${queue.id}/resume`);
    const quarantined = drawQueue({
      ...queue,
      status: 'paused',
      hold: { kind: 'quarantined', reason: '10 failures in a row;\u001b[31m the last: 503', since: ago(1_000), prNumbers: [] },
    });
    expect(quarantined).toContain('⚠ stopped 1s ago, quarantined: 10 failures in a row;[31m the last: 503');
    expect(drawQueue(queue)).not.toContain('⚠');
  });
});
