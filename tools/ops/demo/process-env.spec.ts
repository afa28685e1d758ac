import { startProcessEnv } from './process-env';

describe(startProcessEnv.name, () => {
  it('runs a newcomer’s shell (no NODE_ENV) as development, with warnings and errors only, readable', () => {
    expect(startProcessEnv({})).toEqual({ NODE_ENV: 'development', LOG_LEVEL: 'warn', LOG_FORMAT: 'text' });
    expect(startProcessEnv({ NODE_ENV: '' })).toEqual({ NODE_ENV: 'development', LOG_LEVEL: 'warn', LOG_FORMAT: 'text' });
  });

  it('keeps the log settings a developer set', () => {
    expect(startProcessEnv({ LOG_LEVEL: 'debug', LOG_FORMAT: 'json' })).toEqual({ NODE_ENV: 'development', LOG_LEVEL: 'debug', LOG_FORMAT: 'json' });
  });

  it('leaves production’s JSON logs as they are', () => {
    expect(startProcessEnv({ NODE_ENV: 'production' })).toEqual({ NODE_ENV: 'production' });
  });
});
