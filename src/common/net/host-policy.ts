import ipaddr from 'ipaddr.js';

/**
 * Which hosts the API may open connections to on a caller's say-so (self-hosted git servers): the
 * SSRF policy as data. No I/O here; `host-guard.ts` applies it when resolving and connecting.
 */
export interface HostPolicy {
  /** Plain http (for on-premises servers); https only otherwise. */
  allowHttp: boolean;
  /** Loopback, private (RFC 1918), unique-local IPv6 and carrier-grade NAT addresses. */
  allowPrivateHosts: boolean;
}

/** Ranges `allowPrivateHosts` opens. Link-local (cloud metadata), multicast, unspecified and the rest never are. */
const PRIVATE_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat']);

const RANGE_REASONS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private network address',
  uniqueLocal: 'a unique-local IPv6 address (fc00::/7)',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  linkLocal: 'a link-local address (169.254.0.0/16 or fe80::/10, where cloud metadata services live)',
  multicast: 'a multicast address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
};

/**
 * Cloud metadata and platform services, refused whatever the policy: some sit inside ranges
 * `allowPrivateHosts` opens (AWS's IPv6 IMDS and GCP's in fc00::/7, Alibaba's in 100.64.0.0/10) or
 * in public unicast space (Azure's WireServer). Link-local (169.254.0.0/16, fe80::/10, where most
 * metadata services live) is refused by range.
 */
export const METADATA_ADDRESSES: readonly { cidr: string; what: string }[] = [
  { cidr: 'fd00:ec2::254/128', what: 'the AWS instance metadata service (IPv6)' },
  { cidr: 'fd00:ec2::23/128', what: 'the AWS DNS resolver and time service (IPv6)' },
  { cidr: 'fd20:ce::254/128', what: 'the Google Cloud metadata server (IPv6)' },
  { cidr: '100.100.100.200/32', what: 'the Alibaba Cloud metadata service' },
  { cidr: '168.63.129.16/32', what: 'the Azure WireServer' },
  { cidr: '192.0.0.192/32', what: 'the Oracle Cloud metadata service' },
];
const METADATA_RANGES = METADATA_ADDRESSES.map(({ cidr, what }) => ({ range: ipaddr.parseCIDR(cidr), what }));

/**
 * Why `address` may not be connected to under `policy`, or undefined when it may. IPv4-mapped IPv6
 * addresses are judged as the IPv4 address they carry; metadata addresses are refused in every form.
 */
export function addressRefusal(address: string, policy: HostPolicy): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, ''));
  } catch {
    return `${address} is not an IP address`;
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  for (const {
    range: [network, bits],
    what,
  } of METADATA_RANGES) {
    if (network.kind() === parsed.kind() && parsed.match(network, bits)) return `${parsed.toString()} is ${what}`;
  }
  const range = parsed.range();
  if (range === 'unicast') return undefined;
  if (policy.allowPrivateHosts && PRIVATE_RANGES.has(range)) return undefined;
  return `${parsed.toString()} is ${RANGE_REASONS[range] ?? `a special-purpose address (${range})`}`;
}

export type HostUrlCheck = { ok: true; url: URL; normalized: string; ipLiteral: boolean } | { ok: false; reason: string };

/**
 * The syntactic half of the check of a server URL a caller gives: scheme, no userinfo, no query or
 * fragment, a host. An IP literal is judged here; a name is resolved (and judged) by the guard.
 */
export function checkHostUrl(raw: string, policy: HostPolicy): HostUrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp))
    return { ok: false, reason: policy.allowHttp ? 'must use https or http' : "must use https (plain http is not allowed by this server's configuration)" };
  if (url.username || url.password || /^[a-z]+:\/\/[^/]*@/i.test(raw)) return { ok: false, reason: 'must not carry a user name or password' };
  if (url.search || url.hash || raw.includes('?') || raw.includes('#')) return { ok: false, reason: 'must not have a query or fragment' };
  if (!url.hostname) return { ok: false, reason: 'has no host' };
  const ipLiteral = isIpLiteral(url.hostname);
  if (ipLiteral) {
    const refusal = addressRefusal(url.hostname, policy);
    if (refusal) return { ok: false, reason: `points to ${refusal}` };
  }
  const normalized = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  return { ok: true, url, normalized, ipLiteral };
}

export function isIpLiteral(hostname: string): boolean {
  return ipaddr.isValid(hostname.replace(/^\[|\]$/g, ''));
}
