import { OPEN_REDIRECT_PROBES } from '../../../test/support/open-redirect-probes';
import { allowedRedirect, withQueryParameter } from './redirect-policy';

const ALLOWED = ['https://app.example.com'];


describe(allowedRedirect.name, () => {
  it.each(OPEN_REDIRECT_PROBES)('refuses %j', (probe) => {
    expect(allowedRedirect(probe, ALLOWED)).toBeUndefined();
  });

  it.each(['/', '/settings/integrations', '/a/b?x=1#frag', 'https://app.example.com', 'https://app.example.com/settings', 'HTTPS://APP.EXAMPLE.COM/settings'])('allows %j', (target) => {
    expect(allowedRedirect(target, ALLOWED)).toBe(target);
  });

  it('adds a flag without changing where the redirect goes', () => {
    expect(withQueryParameter('/settings?tab=git', 'error', 'access_denied')).toBe('/settings?tab=git&error=access_denied');
    expect(withQueryParameter('https://app.example.com/x', 'error', 'x')).toBe('https://app.example.com/x?error=x');
  });
});
