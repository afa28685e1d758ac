import type { ProviderAccount, ProviderInstallation, ProviderMembership } from '@/modules/git-providers/git-provider.port';

/**
 * Whether the person who authorized may connect an app installation (issue 38 point 4). Seeing an
 * installation is not enough (GitHub lists every installation the user can read a repository of),
 * and the queue then writes with that installation's token: the person must administer it, as
 * GitHub says:
 * - an installation on a user account: that account is the person's own;
 * - on an organization: the person's membership is `active` with role `admin` (an owner).
 * Anything else (an enterprise, an account type GitHub adds later) is refused. Pure: no I/O.
 */
export type InstallationVerdict = { ok: true } | { ok: false; reason: 'installation_not_accessible' | 'installation_not_administered'; why: string };

export function installationVerdict(
  installationId: string,
  installation: ProviderInstallation | undefined,
  person: ProviderAccount,
  membership: ProviderMembership | null | undefined,
): InstallationVerdict {
  if (!installation)
    return { ok: false, reason: 'installation_not_accessible', why: `installation ${installationId} is not accessible to the authorizing user` };
  const { account } = installation;
  if (account.type === 'User') {
    if (account.id !== '' && account.id === person.id) return { ok: true };
    return {
      ok: false,
      reason: 'installation_not_administered',
      why: `installation ${installationId} is on the account ${account.login}, not on ${person.login}'s own`,
    };
  }
  if (account.type === 'Organization') {
    if (membership?.state === 'active' && membership.role === 'admin') return { ok: true };
    const as = membership ? `${membership.state} ${membership.role}` : 'not a member';
    return {
      ok: false,
      reason: 'installation_not_administered',
      why: `installation ${installationId} is on the organization ${account.login}, which ${person.login} does not administer (${as}; an active admin membership is needed)`,
    };
  }
  return {
    ok: false,
    reason: 'installation_not_administered',
    why: `installation ${installationId} is on a ${account.type || 'unknown'} account, which cannot be connected`,
  };
}

/** Whether the verdict needs the person's membership of the installation's organization. */
export function needsMembership(installation: ProviderInstallation | undefined): installation is ProviderInstallation {
  return installation?.account.type === 'Organization';
}
