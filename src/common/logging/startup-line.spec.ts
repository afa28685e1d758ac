import { processLine, startupLine } from './startup-line';

describe(startupLine.name, () => {
  it.each(['info', 'warn', 'silent'] as const)('as JSON is the line as before, whatever the level (LOG_LEVEL=%s): scripts wait for it', (logLevel) => {
    expect(startupLine({ logLevel, logFormat: 'json' }, 'api listening', { port: 3000 })).toBe('{"level":30,"msg":"api listening","port":3000}\n');
  });

  it('with LOG_FORMAT=text is readable at info and below', () => {
    expect(startupLine({ logLevel: 'info', logFormat: 'text' }, 'api listening', { port: 3000 })).toMatch(
      /^\d\d:\d\d:\d\d INFO {2}api listening {2}port=3000\n$/,
    );
    expect(startupLine({ logLevel: 'debug', logFormat: 'text' }, 'worker started', {})).toMatch(/^\d\d:\d\d:\d\d INFO {2}worker started\n$/);
  });

  it.each(['warn', 'error', 'fatal', 'silent'] as const)('with LOG_FORMAT=text is nothing at LOG_LEVEL=%s', (logLevel) => {
    expect(startupLine({ logLevel, logFormat: 'text' }, 'api listening', { port: 3000 })).toBeUndefined();
  });
});

describe(processLine.name, () => {
  it('writes an error line at LOG_LEVEL=warn with LOG_FORMAT=text, and a JSON line when no configuration is known yet', () => {
    expect(processLine({ logLevel: 'warn', logFormat: 'text' }, 'error', 'api did not stop within the grace period: exiting', { graceMs: 10 })).toMatch(
      /^\d\d:\d\d:\d\d ERROR api did not stop within the grace period: exiting {2}graceMs=10\n$/,
    );
    expect(processLine(undefined, 'info', 'api stopping', { time: 1, signal: 'SIGTERM' })).toBe(
      '{"level":30,"time":1,"msg":"api stopping","signal":"SIGTERM"}\n',
    );
  });
});
