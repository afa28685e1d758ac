import { feature, int, pattern } from '../variables';

/** Managed domains: the resolver verification uses, periodic re-verification, and expiry of unverified registrations. */
export const domainsConfig = feature(
  'Domains',
  {
    DNS_SERVERS: pattern(
      /^\s*(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+)(\s*,\s*(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+))*\s*$/,
      'must be comma-separated IP addresses, each with an optional :port (IPv6 with a port as [addr]:port)',
      {
        shown: "(the system's)",
        doc: 'comma-separated resolver addresses for domain verification, `ip` or `ip:port` (`[ipv6]:port`)',
        comment: "empty = the system's resolvers",
      },
    ),
    DNS_TIMEOUT_MS: int({
      min: 100,
      max: 60_000,
      default: 5_000,
      doc: 'one attempt of a DNS lookup (two attempts); a lookup that does not answer makes `POST /domains/{id}/verify` a 503',
    }),
    DOMAIN_REVERIFY_INTERVAL_MS: int({
      min: 60_000,
      max: 7 * 86_400_000,
      default: 3_600_000,
      doc: 'how often the worker re-verifies ACTIVE domains',
    }),
    DOMAIN_VERIFICATION_GRACE_MS: int({
      min: 0,
      max: 30 * 86_400_000,
      default: 86_400_000,
      doc: "how long an ACTIVE domain's TXT record may be missing before the domain becomes LAPSED (0 = at the first miss)",
    }),
    DOMAIN_PENDING_TTL_MS: int({
      min: 60_000,
      max: 365 * 86_400_000,
      default: 7 * 86_400_000,
      doc: 'how long a domain registration may stay `PENDING_VERIFICATION` before it expires (verification is then a `422`; registering the apex again replaces it). Unverified registrations never hold an apex against other organizations (first to verify wins)',
    }),
    DOMAIN_LAPSED_HOLD_MS: int({
      min: 0,
      max: 365 * 86_400_000,
      default: 30 * 86_400_000,
      doc: "how long a `LAPSED` registration keeps holding its apex against other organizations, counted from when its TXT record was first missed; past it the apex is free: another organization may register it and the first to verify wins (the lapsed registration's owner too, by verifying again). Without it a lapsed registration would keep an apex from its real DNS owner forever",
      comment: 'a LAPSED registration holds its apex this long after its record was first missed; then the apex is free',
    }),
    DOMAIN_PENDING_SWEEP_INTERVAL_MS: int({
      min: 1_000,
      max: 86_400_000,
      default: 600_000,
      doc: 'how often a worker deletes expired `PENDING_VERIFICATION` registrations (in batches of 500, each with a `domain.expired` audit entry); one worker runs each sweep however many there are',
    }),
  },
  (v) => ({
    domains: {
      /** Empty: the system's resolvers. */
      dnsServers: (v.DNS_SERVERS ?? '')
        .split(',')
        .map((server) => server.trim())
        .filter(Boolean),
      /** Per attempt of one lookup. */
      dnsTimeoutMs: v.DNS_TIMEOUT_MS,
      reverifyIntervalMs: v.DOMAIN_REVERIFY_INTERVAL_MS,
      /** How long an ACTIVE domain's record may be missing before it lapses. */
      verificationGraceMs: v.DOMAIN_VERIFICATION_GRACE_MS,
      /** How long a registration may stay PENDING_VERIFICATION; past it, it expires (cannot be verified, is replaced by a new registration). */
      pendingTtlMs: v.DOMAIN_PENDING_TTL_MS,
      /** How long a LAPSED registration holds its apex against other organizations after its record was first missed. */
      lapsedHoldMs: v.DOMAIN_LAPSED_HOLD_MS,
      /** How often a worker deletes PENDING registrations older than pendingTtlMs (the domains queue's job scheduler). */
      pendingSweepIntervalMs: v.DOMAIN_PENDING_SWEEP_INTERVAL_MS,
    },
  }),
);
