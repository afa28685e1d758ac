import { progressLines, settled } from './demo-progress';

describe(progressLines.name, () => {
  const titles = new Map([
    [1, 'One'],
    [2, 'Two'],
  ]);
  const queued = {
    entries: [
      { number: 1, status: 'testing' },
      { number: 2, status: 'testing' },
    ],
    batches: [
      { id: 'b1', status: 'testing', prNumbers: [1], headSha: 'a'.repeat(40) },
      { id: 'b2', status: 'preparing', prNumbers: [2] },
    ],
  };

  it('first tells where each PR is and which candidates CI is testing', () => {
    expect(progressLines(undefined, queued, titles)).toEqual(['CI is testing #1 (candidate aaaaaaaaaaaa)', '#1 "One" testing', '#2 "Two" testing']);
  });

  it('then only what changed: a landing, a merge, a failure with its reason', () => {
    const now = {
      entries: [
        { number: 1, status: 'merged' },
        { number: 2, status: 'failed', block: 'ci failed' },
      ],
      batches: [
        { id: 'b1', status: 'landed', prNumbers: [1], headSha: 'a'.repeat(40) },
        { id: 'b2', status: 'failed', prNumbers: [2] },
      ],
    };
    expect(progressLines(queued, now, titles)).toEqual([
      'landed #1: the base branch moved',
      'the candidate of #2 failed CI',
      '#1 "One" merged',
      '#2 "Two" failed: ci failed (it left the queue; the PRs behind it move up)',
    ]);
    expect(progressLines(now, now, titles)).toEqual([]);
  });
});

describe(settled.name, () => {
  it('holds once every PR is merged, failed or removed', () => {
    expect(settled({ entries: [], batches: [] })).toBe(false);
    expect(
      settled({
        entries: [
          { number: 1, status: 'merged' },
          { number: 2, status: 'testing' },
        ],
        batches: [],
      }),
    ).toBe(false);
    expect(
      settled({
        entries: [
          { number: 1, status: 'merged' },
          { number: 2, status: 'removed' },
        ],
        batches: [],
      }),
    ).toBe(true);
  });
});
