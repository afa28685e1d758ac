import { coAuthorsNamed, coAuthorTrailer, landedNote, replayOrder, squashAuthor, squashCoAuthors, squashMessage, squashTitle } from './land-messages';

const person = (name: string, email: string, date = '2026-01-01T00:00:00Z') => ({ name, email, date });
const commit = (sha: string, message: string, author = person('Ada', 'ada@example.com')) => ({ sha, parents: [], message, author });

describe('land messages', () => {
  it('titles a squash with the PR title and (#N), as GitHub does', () => {
    expect(squashTitle(12, 'Add widgets', [commit('a', 'wip')])).toBe('Add widgets (#12)');
    expect(squashTitle(12, '  Add widgets  ', [])).toBe('Add widgets (#12)');
  });

  it('does not repeat (#N) when the title already ends with it', () => {
    expect(squashTitle(12, 'Add widgets (#12)', [])).toBe('Add widgets (#12)');
    expect(squashTitle(12, 'Add widgets (#1)', [])).toBe('Add widgets (#1) (#12)');
  });

  it('falls back to the first commit subject, then to "Pull request #N", without a title', () => {
    expect(squashTitle(3, null, [commit('a', 'Fix the thing\n\nbody'), commit('b', 'second')])).toBe('Fix the thing (#3)');
    expect(squashTitle(3, '   ', [commit('a', 'Fix the thing')])).toBe('Fix the thing (#3)');
    expect(squashTitle(3, undefined, [])).toBe('Pull request #3 (#3)');
  });

  it('reads Co-authored-by trailers in any case', () => {
    expect(coAuthorsNamed('x\n\nco-authored-by: Bo B <bo@example.com>\nCo-Authored-By:Cy <cy@example.com>\nnot: a <t@x>')).toEqual([
      { name: 'Bo B', email: 'bo@example.com' },
      { name: 'Cy', email: 'cy@example.com' },
    ]);
    expect(coAuthorTrailer({ name: 'Bo B', email: 'bo@example.com' })).toBe('Co-authored-by: Bo B <bo@example.com>');
  });

  it('lists the other authors and named co-authors once each, in order, without the squash author', () => {
    const commits = [
      commit('1', 'one', person('Ada', 'ada@example.com')),
      commit('2', 'two', person('Bo', 'bo@example.com')),
      commit('3', 'three\n\nCo-authored-by: Ada L <ADA@example.com>\nCo-authored-by: Cy <cy@example.com>', person('Bo', 'BO@example.com')),
    ];
    expect(squashCoAuthors(commits, { email: 'Ada@Example.com' })).toEqual([
      { name: 'Bo', email: 'bo@example.com' },
      { name: 'Cy', email: 'cy@example.com' },
    ]);
    expect(squashMessage(7, 'Widgets', commits, { email: 'ada@example.com' })).toBe(
      'Widgets (#7)\n\nCo-authored-by: Bo <bo@example.com>\nCo-authored-by: Cy <cy@example.com>',
    );
  });

  it('is the title alone when the squash author wrote every commit', () => {
    expect(squashMessage(7, 'Widgets', [commit('1', 'a'), commit('2', 'b')], { email: 'ada@example.com' })).toBe('Widgets (#7)');
  });

  it('authors a squash as the first commit author, dated as the last commit', () => {
    expect(squashAuthor([commit('1', 'a', person('Ada', 'ada@example.com', 'd1')), commit('2', 'b', person('Bo', 'bo@example.com', 'd2'))])).toEqual(
      person('Ada', 'ada@example.com', 'd2'),
    );
    expect(squashAuthor([])).toBeNull();
  });
});

describe('replayOrder', () => {
  const c = (sha: string, parents: string[]) => ({ sha, parents, message: sha, author: person('Ada', 'ada@example.com') });

  it('leaves merge commits out and keeps the given order otherwise', () => {
    expect(replayOrder([c('a', ['base']), c('m', ['a', 'main']), c('b', ['m'])]).map((x) => x.sha)).toEqual(['a', 'b']);
  });

  it('puts each commit after its parents when the list is out of order', () => {
    expect(replayOrder([c('c', ['b']), c('a', ['base']), c('b', ['a'])]).map((x) => x.sha)).toEqual(['a', 'b', 'c']);
  });
});

describe('landedNote', () => {
  it('names the landed commit of a squash and every commit of a rebase', () => {
    expect(landedNote('squash', 'main', ['a'.repeat(40)])).toMatch(
      new RegExp(`^Landed on \`main\` by the merge queue, squashed into one commit ${'a'.repeat(40)}\\.`),
    );
    const note = landedNote('rebase', 'main', ['1'.repeat(40), '2'.repeat(40)]);
    expect(note).toContain('rebased as 2 commits:\n\n- ' + '1'.repeat(40) + '\n- ' + '2'.repeat(40) + '.');
    expect(landedNote('rebase', 'main', ['1'.repeat(40)])).toContain('rebased as 1 commit ' + '1'.repeat(40));
  });
});
