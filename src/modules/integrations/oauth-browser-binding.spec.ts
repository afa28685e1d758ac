import { flowCookie, flowCookieName, hashNonce, newBrowserNonce, nonceMatches, readCookie } from './oauth-browser-binding';

describe('OAuth browser binding', () => {
  it('a __Host- cookie per flow: Secure, HttpOnly, SameSite=Lax, Path=/', () => {
    const cookie = flowCookie('0193-abc', 'n', 60_000);
    expect(cookie).toEqual({
      name: '__Host-dpa-oauth-0193-abc',
      value: 'n',
      options: { secure: true, httpOnly: true, sameSite: 'lax', path: '/', maxAge: 60_000 },
    });
    expect(flowCookieName('a;b=c')).toBe('__Host-dpa-oauth-abc');
  });

  it('matches only the nonce whose hash was stored', () => {
    const { nonce, hash } = newBrowserNonce();
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hash).toBe(hashNonce(nonce));
    expect(nonceMatches(nonce, hash)).toBe(true);
    expect(nonceMatches(`${nonce}x`, hash)).toBe(false);
    expect(nonceMatches(undefined, hash)).toBe(false);
    expect(nonceMatches('', hash)).toBe(false);
    expect(nonceMatches(nonce, null)).toBe(false);
    expect(nonceMatches(nonce, 'not-hex')).toBe(false);
  });

  it('reads one cookie from a Cookie header', () => {
    expect(readCookie('a=1; __Host-dpa-oauth-x=abc; b=2', '__Host-dpa-oauth-x')).toBe('abc');
    expect(readCookie('dpa-oauth-x=abc', '__Host-dpa-oauth-x')).toBeUndefined();
    expect(readCookie('__Host-dpa-oauth-x="q"', '__Host-dpa-oauth-x')).toBe('q');
    expect(readCookie(undefined, 'x')).toBeUndefined();
  });
});
