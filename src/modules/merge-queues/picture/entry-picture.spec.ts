import { drawEntry, type EntryPicture } from './entry-picture';

const details: EntryPicture = {
  entry: {
    id: 'e1',
    number: 21,
    headSha: 'a'.repeat(40),
    url: 'https://github.com/acme/shop/pull/21',
    status: 'testing',
    position: 3,
    priority: 0,
    setAside: false,
  },
  origin: { via: 'label', actor: 'octocat', actorKind: 'github' },
  title: 'Add the widget API\u001b[2J',
  titleSource: 'github',
  lanes: ['api', 'web'],
  pathsStatus: 'listed',
  pathsCount: 4,
  batch: { id: 'b1b1b1b1-0000', status: 'testing', prNumbers: [21, 22], requiredChecks: [{ name: 'ci', state: 'pending' }] },
  enqueuedAt: '2026-11-23T11:00:00.000Z',
  updatedAt: '2026-11-23T11:05:00.000Z',
  events: [
    { type: 'titleChanged', createdAt: '2026-11-23T11:01:00.000Z', detail: { entryId: 'e1', title: 'Add the widget API' }, transitions: [] },
    {
      type: 'operationSucceeded',
      createdAt: '2026-11-23T11:00:30.000Z',
      detail: {},
      transitions: [{ subject: 'entry', id: 'e1', from: 'queued', to: 'testing' }],
    },
    { type: 'entryLanes', createdAt: '2026-11-23T11:00:00.000Z', detail: { entryId: 'e1', lanes: ['api', 'web'] }, transitions: [] },
    { type: 'enqueue', createdAt: '2026-11-23T11:00:00.000Z', detail: { entryId: 'e1' }, transitions: [] },
  ],
};

describe(drawEntry.name, () => {
  it('draws the PR, where its title came from, how it came, its lanes, batch and events, with nothing a terminal would obey', () => {
    expect(drawEntry(details)).toBe(
      [
        '#21  Add the widget API[2J',
        '  title from   GitHub',
        `  status       testing   priority 0   head ${'a'.repeat(12)}`,
        '  came by      the enqueue label, asked by octocat',
        '  lanes        api, web (listed, 4 paths)',
        '  batch        b1b1b1b1 testing  #21 #22  … ci',
        '  pull request https://github.com/acme/shop/pull/21',
        '',
        'events (newest first)',
        '  2026-11-23 11:01:00  titleChanged "Add the widget API"',
        '  2026-11-23 11:00:30  operationSucceeded  queued → testing',
        '  2026-11-23 11:00:00  entryLanes api, web',
        '  2026-11-23 11:00:00  enqueue',
        '',
      ].join('\n'),
    );
  });

  it('says what is not known: no title, no origin recorded, no lanes, no batch', () => {
    const bare = drawEntry({ ...details, origin: null, title: null, titleSource: null, lanes: undefined, pathsStatus: undefined, batch: null, events: [] });
    expect(bare).toContain('#21  (no title)');
    expect(bare).toContain('came by      not recorded');
    expect(bare).not.toContain('lanes');
    expect(bare).not.toContain('batch');
    expect(bare).not.toContain('title from');
  });
});
