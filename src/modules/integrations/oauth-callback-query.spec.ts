import { parseCallbackQuery, setupOutcome } from './oauth-callback-query';

describe(parseCallbackQuery.name, () => {
  it('keeps the known parameters and ignores every other one', () => {
    expect(
      parseCallbackQuery({ code: 'c', state: 's', installation_id: '42', setup_action: 'install', foo: 'bar', installation_target_id: { a: '1' } }),
    ).toEqual({
      params: { code: 'c', state: 's', installation_id: '42', setup_action: 'install' },
      problems: [],
    });
  });

  it('names a malformed known parameter without its value', () => {
    const { params, problems } = parseCallbackQuery({
      state: 's',
      code: ['a', 'b'],
      installation_id: 'abc',
      error: 'x'.repeat(101),
      error_description: 'a\u0000b',
    });
    expect(params).toEqual({ state: 's' });
    expect(problems).toEqual([
      { name: 'code', why: 'must be given once, as a plain value' },
      { name: 'installation_id', why: 'must be a number' },
      { name: 'error', why: 'must be at most 100 characters' },
      { name: 'error_description', why: 'must not contain the NUL character (U+0000)' },
    ]);
  });

  it('treats an empty value as absent', () => {
    expect(parseCallbackQuery({ state: '', code: '' })).toEqual({ params: {}, problems: [] });
  });
});

describe(setupOutcome.name, () => {
  it.each([
    [undefined, 'proceed'],
    ['install', 'proceed'],
    ['update', 'proceed'],
    ['request', 'requested'],
    ['uninstall', 'unsupported'],
  ] as const)('%s -> %s', (action, outcome) => {
    expect(setupOutcome(action)).toBe(outcome);
  });
});
