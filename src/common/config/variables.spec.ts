import { ConfigError, environment, feature, flag, int, oneOf, pattern } from './variables';

const one = feature(
  'One',
  {
    COUNT: int({ min: 1, max: 10, default: 3, doc: 'a count' }),
    LIMIT: int({ min: 1, max: 10, doc: 'a limit', shown: '`COUNT`' }),
    ON: flag({ default: true, doc: 'a switch' }),
    MODE: oneOf(['a', 'b'], { default: 'a', doc: 'a mode' }),
    NAME: pattern(/^[a-z]+$/, 'must be lower-case letters', { required: true, doc: 'a name', example: 'abc' }),
  },
  (v) => ({ count: v.COUNT, limit: v.LIMIT ?? v.COUNT, on: v.ON, mode: v.MODE, name: v.NAME }),
);

describe(environment.name, () => {
  const env = environment([one]);

  it('reads every variable with its default applied, an empty value as unset', () => {
    const values = env.read({ NAME: 'x', COUNT: '', ON: 'false' });
    expect(values).toEqual({ COUNT: 3, LIMIT: undefined, ON: false, MODE: 'a', NAME: 'x' });
    expect(one.build(values)).toEqual({ count: 3, limit: 3, on: false, mode: 'a', name: 'x' });
  });

  it('refuses with one line per bad variable, naming it', () => {
    expect(() => env.read({ COUNT: '11', MODE: 'c' })).toThrow(ConfigError);
    expect(() => env.read({ COUNT: '11', MODE: 'c' })).toThrow(
      [
        'Invalid configuration: COUNT must not be greater than 10',
        'Invalid configuration: MODE must be one of the following values: a, b',
        'Invalid configuration: NAME is not set',
      ].join('\n'),
    );
    expect(() => env.read({ NAME: 'X1' })).toThrow('Invalid configuration: NAME must be lower-case letters');
  });

  it('documents each variable: default as shown, allowed values, .env.example value', () => {
    expect(Object.values(one.variables).map((v) => [v.shownDefault, v.allowed, v.example])).toEqual([
      ['`3`', '1–10', '3'],
      ['`COUNT`', '1–10', ''],
      ['`true`', '`true`, `false`', 'true'],
      ['`a`', '`a`, `b`', 'a'],
      ['(required)', 'lower-case letters', 'abc'],
    ]);
  });

  it('refuses a variable two features declare', () => {
    expect(() => environment([one, feature('Two', { COUNT: int({ min: 0, max: 1, doc: 'again' }) }, () => ({}))])).toThrow('COUNT is declared twice');
  });
});
