import { inspectJson, scanJson } from './body-guard';

const limits = { maxDepth: 4, maxKeys: 10 };

describe(inspectJson.name, () => {
  it('accepts a body within the limits', () => {
    expect(inspectJson({ data: { name: 'x', tags: ['a', 'b'], nested: { ok: true } } }, limits)).toBeUndefined();
    expect(inspectJson(null, limits)).toBeUndefined();
  });

  it('names the path where nesting passes the limit', () => {
    expect(inspectJson({ data: { x: [[{}]] } }, limits)).toEqual({ kind: 'depth', path: 'data.x[0][0]' });
  });

  it('walks 100,000 levels without recursion', () => {
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
    expect(inspectJson({ data: deep }, { maxDepth: 32, maxKeys: 1000 })).toEqual({ kind: 'depth', path: expect.stringMatching(/^data(\[0\])+/) });
  });

  it('counts keys and array items over the whole body, and stops early', () => {
    expect(inspectJson({ data: { a: [1, 2, 3], b: { c: 1, d: 2 } } }, limits)).toBeUndefined();
    expect(inspectJson({ data: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i])) }, limits)).toEqual({ kind: 'keys' });
  });

  it('names strings and keys that Postgres cannot store', () => {
    expect(inspectJson({ data: { name: 'a\u0000b' } }, limits)).toEqual({ kind: 'string', path: 'data.name', why: expect.stringContaining('NUL') });
    expect(inspectJson({ data: { list: ['ok', 'x\ud800'] } }, limits)).toEqual({
      kind: 'string',
      path: 'data.list[1]',
      why: expect.stringContaining('surrogate'),
    });
    expect(inspectJson({ data: { 'a\u0000': 1 } }, limits)).toEqual({
      kind: 'key',
      path: 'data["a\\u0000"]',
      why: expect.stringContaining('key must not contain the NUL'),
    });
    expect(inspectJson('\u0000', limits)).toMatchObject({ kind: 'string' });
  });

  it('refuses __proto__ keys', () => {
    expect(inspectJson(JSON.parse('{"data":{"__proto__":{"x":1}}}'), limits)).toEqual({ kind: 'key', path: 'data.__proto__', why: 'is not an accepted field' });
  });

  it('keeps paths short whatever the keys', () => {
    const problem = inspectJson({ data: { ['k'.repeat(10_000)]: 'a\u0000' } }, limits) as { path: string };
    expect(problem.path.length).toBeLessThan(100);
  });
});

describe(scanJson.name, () => {
  const scan = (json: string, l = limits) => scanJson(Buffer.from(json), l);

  it('agrees with the walk of the parsed value', () => {
    const bodies = [
      '{"data":{"name":"x","tags":["a","b"],"n":{"ok":true}}}',
      '{"data":{"x":[[{}]]}}',
      '[[[[[]]]]]',
      '{"data":{"a":[1,2,3],"b":{"c":1,"d":2}}}',
      `{"data":{${Array.from({ length: 10 }, (_, i) => `"k${i}":${i}`).join(',')}}}`,
      '{"a":"}]{[,:\\"","b":[]}',
      '[]',
      '{}',
      '"x"',
      '12',
    ];
    for (const json of bodies) {
      const parsed = inspectJson(JSON.parse(json), limits);
      const scanned = scan(json);
      expect([json, scanned?.kind]).toEqual([json, parsed?.kind === 'string' || parsed?.kind === 'key' ? undefined : parsed?.kind]);
      if (parsed?.kind === 'depth') expect(scanned).toEqual(parsed);
    }
  });

  it('stops at the first limit passed, before reading the rest', () => {
    const many = `{"data":{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":${i}`).join(',')}}}`;
    // The bytes the scanner reads, by index: it must stop near key 1,001, not read the 1.3 MB.
    let furthest = -1;
    const bytes = new Proxy(Buffer.from(many), {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) furthest = Math.max(furthest, Number(key));
        const value: unknown = Reflect.get(target, key, receiver === bytes ? target : receiver);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    expect(scanJson(bytes, { maxDepth: 32, maxKeys: 1000 })).toEqual({ kind: 'keys' });
    expect(furthest).toBeGreaterThan(0);
    expect(furthest).toBeLessThan(many.indexOf('"k1001"') + 16);
    expect(scan('{"data":{"x":' + '['.repeat(10_000) + ']'.repeat(10_000) + '}}', { maxDepth: 32, maxKeys: 1000 })).toEqual({
      kind: 'depth',
      path: expect.stringMatching(/^data\.x(\[0\])+$/),
    });
  });

  it('counts array items, not commas in strings or empty arrays', () => {
    expect(scan('{"a":[1,2,3,4,5,6,7,8,9,10]}')).toEqual({ kind: 'keys' });
    expect(scan('{"a":[1,2,3,4,5,6,7,8,9]}')).toBeUndefined();
    expect(scan('{"a":"1,2,3,4,5,6,7,8,9,10,11","b":[[],[],[]]}')).toBeUndefined();
  });
});
