import { installationVerdict } from './installation-admin';

const person = { id: '7', login: 'octocat' };
const on = (type: string, id = '7', login = 'octocat') => ({ id: '42', account: { id, login, type }, repositorySelection: 'all' });

describe('installationVerdict (issue 38 point 4: administer, not only see)', () => {
  it("accepts the person's own account and an organization they are an active admin of", () => {
    expect(installationVerdict('42', on('User'), person, undefined)).toEqual({ ok: true });
    expect(installationVerdict('42', on('Organization', '9', 'acme'), person, { role: 'admin', state: 'active' })).toEqual({ ok: true });
  });

  it('refuses an installation not listed, another user, a plain or pending membership, no membership, an enterprise', () => {
    expect(installationVerdict('42', undefined, person, undefined)).toMatchObject({ ok: false, reason: 'installation_not_accessible' });
    expect(installationVerdict('42', on('User', '8', 'hubot'), person, undefined)).toMatchObject({ ok: false, reason: 'installation_not_administered' });
    const org = on('Organization', '9', 'acme');
    for (const membership of [{ role: 'member', state: 'active' }, { role: 'admin', state: 'pending' }, { role: 'billing_manager', state: 'active' }, null])
      expect(installationVerdict('42', org, person, membership)).toMatchObject({ ok: false, reason: 'installation_not_administered' });
    expect(installationVerdict('42', on('Enterprise', '7'), person, { role: 'admin', state: 'active' })).toMatchObject({ ok: false });
    expect(installationVerdict('42', on('User', ''), { id: '', login: 'x' }, undefined)).toMatchObject({ ok: false });
  });
});
