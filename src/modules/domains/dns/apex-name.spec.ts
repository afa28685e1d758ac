import { ancestorsOf, isUnder, normalizeApex, normalizeHostname } from './apex-name';

describe('normalizeApex', () => {
  it.each([
    ['preview.acme.dev', 'preview.acme.dev'],
    ['Bücher.Example', 'xn--bcher-kva.example'],
    ['bücher.example.', 'xn--bcher-kva.example'],
    ['PREVIEW.Acme.DEV.', 'preview.acme.dev'],
    ['ß.de', 'xn--zca.de'],
    ['foo.github.io', 'foo.github.io'],
    ['acme.co.uk', 'acme.co.uk'],
  ])('normalises %s to %s', (input, expected) => {
    expect(normalizeApex(input)).toEqual({ ok: true, name: expected });
  });

  it.each(['com', 'co.uk', 'github.io', 'dev', 'COM.', 's3.amazonaws.com'])('refuses the public suffix %s', (input) => {
    const result = normalizeApex(input);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toContain('is a public suffix');
  });

  it.each([
    '',
    '.',
    'localhost',
    'a..b.com',
    '-a.com',
    'a-.com',
    '1.2.3.4',
    '*.acme.dev',
    'a b.com',
    'acme.dev..',
    'a_b.com',
    'xn--zz.com',
    `${'a'.repeat(64)}.com`,
    `${'a.'.repeat(127)}com`,
  ])('refuses %j', (input) => {
    expect(normalizeApex(input).ok).toBe(false);
  });
});

describe('normalizeHostname', () => {
  it('takes names under any suffix, IDNA and case normalised', () => {
    expect(normalizeHostname('PR-1.Bücher.example.')).toEqual({ ok: true, name: 'pr-1.xn--bcher-kva.example' });
  });
});

describe('ancestorsOf / isUnder', () => {
  it('lists the proper ancestors nearest first', () => {
    expect(ancestorsOf('a.b.acme.dev')).toEqual(['b.acme.dev', 'acme.dev', 'dev']);
    expect(ancestorsOf('dev')).toEqual([]);
  });

  it('is strictly under, at a label boundary', () => {
    expect(isUnder('x.acme.dev', 'acme.dev')).toBe(true);
    expect(isUnder('a.b.acme.dev', 'acme.dev')).toBe(true);
    expect(isUnder('acme.dev', 'acme.dev')).toBe(false);
    expect(isUnder('xacme.dev', 'acme.dev')).toBe(false);
  });
});
