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
 * Why `address` may not be connected to under `policy`, or undefined when it may. IPv6 addresses
 * carrying an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo: see embeddedIPv4) are judged
 * as that IPv4 address; metadata addresses are refused in every form.
 */
export function addressRefusal(address: string, policy: HostPolicy): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, ''));
  } catch {
    return `${address} is not an IP address`;
  }
  if (parsed.kind() === 'ipv6') {
    const embedded = embeddedIPv4(parsed as ipaddr.IPv6);
    if (embedded?.standsFor) parsed = embedded.ipv4;
    else if (embedded) {
      // A translation prefix (NAT64, 6to4, Teredo) reaches the IPv4 address it carries through a
      // gateway: judged as that address first, then as the IPv6 range it is in.
      const refusal = addressRefusal(embedded.ipv4.toString(), policy);
      if (refusal) return `${parsed.toString()} carries ${embedded.ipv4.toString()} (${embedded.how}): ${refusal}`;
    }
  }
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

/**
 * The IPv4 address an IPv6 address carries, by every spelling that reaches it: IPv4-mapped
 * (`::ffff:a9fe:a9fe`) and IPv4-compatible (`::a9fe:a9fe`, deprecated but still routed by some
 * stacks to the IPv4 address) stand for the IPv4 address itself (`standsFor`); the SIIT form
 * (`::ffff:0:a9fe:a9fe`), NAT64 (`64:ff9b::/96`, and RFC 8215's `64:ff9b:1::/48`), 6to4
 * (`2002::/16`) and Teredo (`2001::/32`) carry it through a translator.
 */
export function embeddedIPv4(address: ipaddr.IPv6): { ipv4: ipaddr.IPv4; standsFor: boolean; how: string } | undefined {
  const p = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return { ipv4: v4(p[6], p[7]), standsFor: true, how: 'IPv4-mapped' };
  // ::/96 but not :: (unspecified) or ::1 (loopback), which are IPv6 addresses of their own.
  if (zeros(0, 6) && (p[6] !== 0 || p[7] > 1)) return { ipv4: v4(p[6], p[7]), standsFor: true, how: 'IPv4-compatible' };
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return { ipv4: v4(p[6], p[7]), standsFor: false, how: 'IPv4-translated (SIIT)' };
  if (p[0] === 0x64 && p[1] === 0xff9b && (p[2] === 0 || p[2] === 1)) return { ipv4: v4(p[6], p[7]), standsFor: false, how: 'NAT64' };
  if (p[0] === 0x2002) return { ipv4: v4(p[1], p[2]), standsFor: false, how: '6to4' };
  if (p[0] === 0x2001 && p[1] === 0) return { ipv4: v4(~p[6] & 0xffff, ~p[7] & 0xffff), standsFor: false, how: 'Teredo' };
  return undefined;
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
