import { decideApexStatus, mayNestUnder } from './apex-status.rules';

const ME = 'org-me';
const OTHER = 'org-other';

describe('decideApexStatus', () => {
  it.each([
    // [case, registration, active ancestor, expected]
    ['unregistered, nothing above', undefined, undefined, { exists: false, owner: '', authorized: true, visible: false, showsDependents: false }],
    [
      'unregistered under my active apex',
      undefined,
      { organizationId: ME, grantedToCaller: false },
      { exists: false, owner: '', authorized: true, visible: false, showsDependents: false },
    ],
    [
      "unregistered under another's active apex",
      undefined,
      { organizationId: OTHER, grantedToCaller: false },
      { exists: false, owner: '', authorized: false, visible: false, showsDependents: false },
    ],
    [
      "unregistered under another's active apex, granted",
      undefined,
      { organizationId: OTHER, grantedToCaller: true },
      { exists: false, owner: '', authorized: true, visible: false, showsDependents: false },
    ],
    [
      'mine, ACTIVE',
      { organizationId: ME, status: 'ACTIVE', grantedToCaller: false },
      undefined,
      { exists: true, owner: ME, authorized: true, visible: true, showsDependents: true },
    ],
    [
      'mine, PENDING',
      { organizationId: ME, status: 'PENDING_VERIFICATION', grantedToCaller: false },
      undefined,
      { exists: false, owner: ME, authorized: true, visible: true, showsDependents: true },
    ],
    [
      'mine, LAPSED',
      { organizationId: ME, status: 'LAPSED', grantedToCaller: false },
      undefined,
      { exists: false, owner: ME, authorized: true, visible: true, showsDependents: true },
    ],
    [
      "another's, ACTIVE",
      { organizationId: OTHER, status: 'ACTIVE', grantedToCaller: false },
      undefined,
      { exists: true, owner: OTHER, authorized: false, visible: true, showsDependents: false },
    ],
    [
      "another's, ACTIVE, granted",
      { organizationId: OTHER, status: 'ACTIVE', grantedToCaller: true },
      undefined,
      { exists: true, owner: OTHER, authorized: true, visible: true, showsDependents: true },
    ],
    [
      "another's, ACTIVE, under my active apex",
      { organizationId: OTHER, status: 'ACTIVE', grantedToCaller: false },
      { organizationId: ME, grantedToCaller: false },
      { exists: true, owner: OTHER, authorized: false, visible: true, showsDependents: false },
    ],
    [
      "another's, PENDING: reads as unregistered",
      { organizationId: OTHER, status: 'PENDING_VERIFICATION', grantedToCaller: true },
      undefined,
      { exists: false, owner: '', authorized: true, visible: false, showsDependents: false },
    ],
    [
      "another's, LAPSED, under another's active apex",
      { organizationId: OTHER, status: 'LAPSED', grantedToCaller: false },
      { organizationId: OTHER, grantedToCaller: false },
      { exists: false, owner: '', authorized: false, visible: false, showsDependents: false },
    ],
  ] as const)('%s', (_case, registration, above, expected) => {
    expect(decideApexStatus(ME, registration, above)).toEqual(expected);
  });
});

describe('mayNestUnder', () => {
  it('is decided by the nearest active apex above only', () => {
    expect(mayNestUnder(ME, undefined)).toBe(true);
    expect(mayNestUnder(ME, { organizationId: ME, grantedToCaller: false })).toBe(true);
    expect(mayNestUnder(ME, { organizationId: OTHER, grantedToCaller: true })).toBe(true);
    expect(mayNestUnder(ME, { organizationId: OTHER, grantedToCaller: false })).toBe(false);
  });
});
