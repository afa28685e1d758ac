import { startupLine } from './startup-line';

describe(startupLine.name, () => {
  it('is the JSON line as before at info and below', () => {
    expect(startupLine({ logLevel: 'info', logFormat: 'json' }, 'api listening', { port: 3000 })).toBe('{"level":30,"msg":"api listening","port":3000}\n');
    expect(startupLine({ logLevel: 'debug', logFormat: 'json' }, 'worker started', {})).toBe('{"level":30,"msg":"worker started"}\n');
  });

  it('is readable with LOG_FORMAT=text', () => {
    expect(startupLine({ logLevel: 'info', logFormat: 'text' }, 'api listening', { port: 3000 })).toMatch(
      /^\d\d:\d\d:\d\d INFO {2}api listening {2}port=3000\n$/,
    );
  });

  it.each(['warn', 'error', 'fatal', 'silent'] as const)('is nothing at LOG_LEVEL=%s', (logLevel) => {
    expect(startupLine({ logLevel, logFormat: 'json' }, 'api listening', { port: 3000 })).toBeUndefined();
  });
});
