import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { feature, flag, int, pattern } from '../variables';

/** Git providers: LOCAL_GIT repositories on this server's disk, and the limits of every provider call. */
export const gitProvidersConfig = feature(
  'Git providers',
  {
    GIT_LOCAL_ENABLED: flag({
      shown: '`false` in production, `true` in development/test',
      example: 'false',
      doc: "`LOCAL_GIT` code sources (bare repositories on the server's disk, read with the `git` CLI); refused with a 422 when `false`",
      comment: 'LOCAL_GIT code sources: off in production unless true (on by default in development/test)',
    }),
    GIT_LOCAL_ROOT: pattern(/^\/\S*$/, 'must be an absolute path', {
      shown: '(required in production when `LOCAL_GIT` is enabled; the OS temporary directory otherwise)',
      doc: '`LOCAL_GIT` repositories must live under this directory. A path is resolved once (symlinks included, `realpath`) and must stay under the (resolved) root; that resolved path is what is stored and what git runs on, by the API and by the merge-queue executor alike. One path belongs to one organization at a time (another gets `409 dpa:CodeSource:LOCAL_PATH_TAKEN`). With `GIT_LOCAL_ENABLED=false`, existing LOCAL_GIT code sources and their merge queues stop too (`422 dpa:GitProvider:LOCAL_GIT_DISABLED`; the executor does not touch them)',
      comment: 'required in production when GIT_LOCAL_ENABLED=true (the OS temporary directory elsewhere)',
    }),
    GIT_LOCAL_TIMEOUT_MS: int({
      min: 100,
      max: 600_000,
      default: 30_000,
      doc: 'one `git` command on a `LOCAL_GIT` repository (code sources and the merge-queue engine); past it the command and its children are killed and the call fails as a provider timeout',
    }),
    GIT_PROVIDER_TIMEOUT_MS: int({ min: 100, max: 120_000, default: 10_000, doc: 'one request to a git provider, connection to last byte (a 502 past it)' }),
    GIT_PROVIDER_MAX_RESPONSE_BYTES: int({
      min: 1024,
      max: 1_073_741_824,
      default: 10 * 1024 * 1024,
      doc: 'the largest response body a git provider may send; the connection is dropped past it and the call is a `502`',
    }),
    GIT_PROVIDER_MAX_PAGES: int({
      min: 1,
      max: 10_000,
      default: 100,
      doc: "the most pages one provider listing (installations, a run's jobs) is followed through; more is a `502`. Provider error text reaches callers printable and at most 200 characters long; `Retry-After: 0` reads as 1 s, and a usage import rate-limited again and again waits at least 5 s, doubling up to an hour",
    }),
    GIT_REPOSITORY_CACHE_TTL_MS: int({
      min: 0,
      max: 3_600_000,
      default: 30_000,
      doc: 'how long `GET /code-source/{id}/repository` answers from a per-process cache',
    }),
    GIT_SERVER_ALLOW_HTTP: flag({ default: false, doc: 'self-hosted git servers over plain http (on-premises)' }),
    GIT_SERVER_ALLOW_PRIVATE_HOSTS: flag({
      default: false,
      doc: "self-hosted git servers on loopback, private, unique-local or CGNAT addresses; link-local, multicast and unspecified stay refused, and so do cloud metadata services in every form (an IPv6 address carrying an IPv4 one, IPv4-mapped `::ffff:a9fe:a9fe`, IPv4-compatible `::a9fe:a9fe`, NAT64 `64:ff9b::a9fe:a9fe`, 6to4 or Teredo, is judged as that IPv4 address): AWS `fd00:ec2::254`, GCP `fd20:ce::254`, Alibaba `100.100.100.200`, Azure `168.63.129.16`, Oracle `192.0.0.192`. URLs a provider hands back (`Link` pagination) must stay on the provider's own origin",
    }),
    GIT_DNS_SERVERS: pattern(/^[0-9A-Fa-f.:\[\]]+(\s*,\s*[0-9A-Fa-f.:\[\]]+)*$/, 'must be comma-separated ip or ip:port', {
      shown: '(system resolver)',
      doc: 'DNS servers (`ip` or `ip:port`) for self-hosted git server names',
      comment: 'empty = the system resolver',
    }),
  },
  (v) => ({
    /**
     * LOCAL_GIT repositories must live under this directory (symlinks resolved). Required in
     * production when LOCAL_GIT is enabled; elsewhere it defaults to the OS temporary directory.
     */
    localRoot: (v.GIT_LOCAL_ROOT ?? safeRealpath(tmpdir())).replace(/(.)\/+$/, '$1'),
    localTimeoutMs: v.GIT_LOCAL_TIMEOUT_MS,
    /** Each request to a provider, connection to last byte. */
    timeoutMs: v.GIT_PROVIDER_TIMEOUT_MS,
    maxResponseBytes: v.GIT_PROVIDER_MAX_RESPONSE_BYTES,
    maxPages: v.GIT_PROVIDER_MAX_PAGES,
    repositoryCacheTtlMs: v.GIT_REPOSITORY_CACHE_TTL_MS,
    /** Self-hosted servers: plain http, and private/loopback/CGNAT/unique-local hosts, both refused unless set. */
    allowHttp: v.GIT_SERVER_ALLOW_HTTP,
    allowPrivateHosts: v.GIT_SERVER_ALLOW_PRIVATE_HOSTS,
    dnsServers: v.GIT_DNS_SERVERS?.split(',').map((s) => s.trim()),
  }),
);

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
