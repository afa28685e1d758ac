import { OPEN_REDIRECT_PROBES } from '@test/support/open-redirect-probes';
import { allowedRedirect, withQueryParameter } from './redirect-policy';

const ALLOWED = ['https://app.example.com'];

describe(allowedRedirect.name, () => {
  it.each(OPEN_REDIRECT_PROBES)('refuses %j', (probe) => {
    expect(allowedRedirect(probe, ALLOWED)).toBeUndefined();
  });

  it.each(['/', '/settings/integrations', '/a/b?x=1#frag', 'https://app.example.com/', 'https://app.example.com/settings'])('allows %j as it is', (target) => {
    expect(allowedRedirect(target, ALLOWED)).toBe(target);
  });

  it.each([
    ['https://app.example.com', 'https://app.example.com/'],
    ['HTTPS://APP.EXAMPLE.COM/settings', 'https://app.example.com/settings'],
    ['/a/../settings', '/settings'],
    ['/a/./b/%2e%2e/c', '/a/c'],
    ['/../settings', '/settings'],
    ['https://app.example.com/a/../b', 'https://app.example.com/b'],
  ])('normalises %j to %j before checking, and returns what it checked', (target, normalised) => {
    expect(allowedRedirect(target, ALLOWED)).toBe(normalised);
  });

  it('never produces a scheme-relative Location when a flag is added', () => {
    for (const probe of OPEN_REDIRECT_PROBES) {
      const allowed = allowedRedirect(probe, ALLOWED);
      expect(allowed).toBeUndefined();
    }
    expect(() => withQueryParameter('/..//evil.example', 'e', 'x')).toThrow();
  });

  it('adds a flag without changing where the redirect goes', () => {
    expect(withQueryParameter('/settings?tab=git', 'error', 'access_denied')).toBe('/settings?tab=git&error=access_denied');
    expect(withQueryParameter('https://app.example.com/x', 'error', 'x')).toBe('https://app.example.com/x?error=x');
  });
});
