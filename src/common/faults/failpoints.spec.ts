import type * as Failpoints from './failpoints';

/** Failpoints read the environment once, at import: each case imports a fresh copy. */
function loadFailpoints(env: { NODE_ENV?: string; DPA_FAILPOINTS?: string }): typeof Failpoints {
  const saved = { NODE_ENV: process.env.NODE_ENV, DPA_FAILPOINTS: process.env.DPA_FAILPOINTS };
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  if (!('NODE_ENV' in env)) delete process.env.NODE_ENV;
  try {
    let loaded!: typeof Failpoints;
    jest.isolateModules(() => {
      loaded = jest.requireActual('./failpoints');
    });
    return loaded;
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

describe('failpoints', () => {
  let kill: jest.SpyInstance;
  let stderr: jest.SpyInstance;

  beforeEach(() => {
    // The failpoint would SIGKILL this very process: record the call instead.
    kill = jest.spyOn(process, 'kill').mockImplementation(() => true);
    stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });

  afterEach(() => {
    kill.mockRestore();
    stderr.mockRestore();
  });

  it.each([['development'], ['test']])('fire when armed and NODE_ENV is %s', (NODE_ENV) => {
    loadFailpoints({ NODE_ENV, DPA_FAILPOINTS: 'a.b,c.d@q1' }).failpoint('a.b');
    expect(kill).toHaveBeenCalledWith(process.pid, 'SIGKILL');
  });

  it('fire only for the named qualifier', () => {
    const { failpoint } = loadFailpoints({ NODE_ENV: 'test', DPA_FAILPOINTS: 'c.d@q1' });
    failpoint('c.d', 'q2');
    expect(kill).not.toHaveBeenCalled();
    failpoint('c.d', 'q1');
    expect(kill).toHaveBeenCalledTimes(1);
  });

  it.each([['production'], [undefined]])('are never armed when NODE_ENV is %s (unset means production)', (NODE_ENV) => {
    loadFailpoints({ NODE_ENV, DPA_FAILPOINTS: 'a.b' }).failpoint('a.b');
    expect(kill).not.toHaveBeenCalled();
  });

  it('a throwing failpoint throws for its qualifier only, read at each call, never in production', () => {
    const { failpointThrow, FailpointError } = loadFailpoints({ NODE_ENV: 'test' });
    const saved = { NODE_ENV: process.env.NODE_ENV, DPA_FAILPOINTS: process.env.DPA_FAILPOINTS };
    try {
      process.env.NODE_ENV = 'test';
      process.env.DPA_FAILPOINTS = 'x.y@q1';
      expect(() => failpointThrow('x.y', 'q2')).not.toThrow();
      expect(() => failpointThrow('x.y', 'q1')).toThrow(FailpointError);
      process.env.NODE_ENV = 'production';
      expect(() => failpointThrow('x.y', 'q1')).not.toThrow();
      expect(kill).not.toHaveBeenCalled();
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});
