import { Resolver } from 'node:dns/promises';

/** What a TXT lookup found: the records' texts (chunks joined), or none at all (NXDOMAIN or no TXT). */
export interface TxtLookup {
  records: string[];
}

/** The resolver could not answer (timeout, SERVFAIL, refused, unreachable): nothing is known about the record. */
export class DnsUnavailableError extends Error {
  constructor(
    readonly recordName: string,
    readonly reason: string,
  ) {
    super(`DNS lookup of ${recordName} failed: ${reason}`);
  }
}

/** The resolver port: the domains module depends on this, never on node:dns directly. */
export abstract class DnsResolver {
  /** The TXT records at `name`; throws DnsUnavailableError when the resolver cannot say. */
  abstract resolveTxt(name: string): Promise<TxtLookup>;
}

/** Answers that mean "no such record" rather than "could not find out". */
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA']);
/** Attempts per lookup; each waits `timeoutMs` (c-ares backs off between attempts). */
export const DNS_TRIES = 2;

/** The real resolver: node:dns with the configured servers (the system's when none are given). */
export class NodeDnsResolver extends DnsResolver {
  private readonly resolver: Resolver;

  constructor(servers: readonly string[], timeoutMs: number) {
    super();
    this.resolver = new Resolver({ timeout: timeoutMs, tries: DNS_TRIES });
    if (servers.length > 0) this.resolver.setServers([...servers]);
  }

  async resolveTxt(name: string): Promise<TxtLookup> {
    try {
      const records = await this.resolver.resolveTxt(name);
      return { records: records.map((chunks) => chunks.join('')) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
      if (NO_RECORD.has(code)) return { records: [] };
      throw new DnsUnavailableError(name, code);
    }
  }
}
