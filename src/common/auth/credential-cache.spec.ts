import { CredentialCache } from './credential-cache';
import type { Principal } from './principal';

const principal = (actorId: string, organizationId = 'org-1'): Principal => ({
  organizationId,
  actorId,
  actorType: 'MEMBERSHIP',
  actorName: 'x',
  role: 'MEMBER',
  isSuperadmin: false,
  apiKeyId: `key-${actorId}`,
});

describe(CredentialCache.name, () => {
  it('returns an entry until its TTL passes', () => {
    const cache = new CredentialCache(1000);
    cache.set('h', principal('a'), null, 0, cache.epoch);
    expect(cache.get('h', 999)?.principal.actorId).toBe('a');
    expect(cache.get('h', 1000)).toBeUndefined();
  });

  it('drops a token, an actor or an organization on invalidation', () => {
    const cache = new CredentialCache(1000);
    cache.set('h1', principal('a'), null, 0, cache.epoch);
    cache.set('h2', principal('b'), null, 0, cache.epoch);
    cache.set('h3', principal('c', 'org-2'), null, 0, cache.epoch);
    cache.invalidate({ tokenHash: 'h1' });
    expect(cache.get('h1', 1)).toBeUndefined();
    cache.invalidate({ actorId: 'b' });
    expect(cache.get('h2', 1)).toBeUndefined();
    expect(cache.get('h3', 1)).toBeDefined();
    cache.invalidate({ organizationId: 'org-2' });
    expect(cache.get('h3', 1)).toBeUndefined();
  });

  it('drops every entry when told to drop all', () => {
    const cache = new CredentialCache(1000);
    cache.set('h1', principal('a'), null, 0, cache.epoch);
    cache.set('h2', principal('b', 'org-2'), null, 0, cache.epoch);
    cache.invalidate({ all: true });
    expect(cache.get('h1', 1)).toBeUndefined();
    expect(cache.get('h2', 1)).toBeUndefined();
  });

  it('does not store a fill that read the database before an invalidation', () => {
    const cache = new CredentialCache(1000);
    const epochAtRead = cache.epoch;
    cache.invalidate({ tokenHash: 'h' });
    cache.set('h', principal('a'), null, 0, epochAtRead);
    expect(cache.get('h', 1)).toBeUndefined();
  });

  it('caches nothing while disabled, and forgets everything when disabled', () => {
    const cache = new CredentialCache(1000);
    cache.set('h', principal('a'), null, 0, cache.epoch);
    cache.setEnabled(false);
    expect(cache.get('h', 1)).toBeUndefined();
    cache.set('h', principal('a'), null, 0, cache.epoch);
    expect(cache.get('h', 1)).toBeUndefined();
    cache.setEnabled(true);
    cache.set('h', principal('a'), null, 0, cache.epoch);
    expect(cache.get('h', 1)).toBeDefined();
  });

  it('stays within its size bound', () => {
    const cache = new CredentialCache(1000, 3);
    for (let i = 0; i < 10; i++) cache.set(`h${i}`, principal(`a${i}`), null, 0, cache.epoch);
    expect(['h7', 'h8', 'h9'].every((h) => cache.get(h, 1))).toBe(true);
    expect(cache.get('h0', 1)).toBeUndefined();
  });
});

describe('a scoped key in the credential cache', () => {
  it('keeps the scopes with the cached principal and drops them with the token', () => {
    const cache = new CredentialCache(1000);
    cache.set('h', { ...principal('ci'), role: 'ADMIN', scopes: ['mergeQueues:reportChecks'] }, null, 0, cache.epoch);
    expect(cache.get('h', 1)?.principal.scopes).toEqual(['mergeQueues:reportChecks']);
    // Rotation and revocation announce the old token's hash: the scoped principal goes with it.
    cache.invalidate({ tokenHash: 'h' });
    expect(cache.get('h', 1)).toBeUndefined();
  });
});
