import { domainToASCII, domainToUnicode } from 'node:url';
import { parse } from 'tldts';

/** Longest name DNS carries, in its ASCII (A-label) form without the trailing dot. */
export const MAX_HOSTNAME_LENGTH = 253;
/** Longest input accepted before normalisation (Unicode input is usually shorter than its A-labels). */
export const MAX_HOSTNAME_INPUT_LENGTH = 300;
/** Where the verification TXT record of an apex is published, below the apex. */
export const VERIFICATION_LABEL = '_dpa-challenge';

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export type NameCheck = { ok: true; name: string } | { ok: false; reason: string };

/**
 * A hostname as the service stores it: IDNA to ASCII (WHATWG URL host rules, through Node's
 * `url.domainToASCII`, which also lower-cases and maps full-width characters), one trailing dot
 * dropped, every label a valid LDH label, not an IP address.
 */
export function normalizeHostname(input: string): NameCheck {
  if (input.length === 0) return { ok: false, reason: 'must not be empty' };
  if (input.length > MAX_HOSTNAME_INPUT_LENGTH) return { ok: false, reason: `must be at most ${MAX_HOSTNAME_INPUT_LENGTH} characters` };
  const withoutDot = input.endsWith('.') ? input.slice(0, -1) : input;
  const ascii = withoutDot.length > 0 && !/[\s/\\?#@:[\]%*]/.test(withoutDot) ? domainToASCII(withoutDot) : '';
  if (!ascii) return { ok: false, reason: 'is not a valid host name' };
  if (ascii.length > MAX_HOSTNAME_LENGTH) return { ok: false, reason: `is longer than ${MAX_HOSTNAME_LENGTH} characters in its ASCII form` };
  const labels = ascii.split('.');
  const bad = labels.find((label) => !LABEL.test(label) || !validALabel(label));
  if (bad !== undefined)
    return { ok: false, reason: bad === '' ? 'has an empty label' : `has an invalid label "${bad.slice(0, 63)}" (letters, digits and inner hyphens only)` };
  if (/^[0-9]+$/.test(labels[labels.length - 1]) || parse(ascii, { extractHostname: false }).isIp)
    return { ok: false, reason: 'must be a host name, not an IP address' };
  return { ok: true, name: ascii };
}

/**
 * An `xn--` label must be real Punycode that decodes and encodes back to itself. Node 20 refuses
 * a bad one in `domainToASCII`; Node 22+ (a newer URL parser) passes it through unchanged, so it is
 * checked here on every version.
 */
function validALabel(label: string): boolean {
  if (!label.startsWith('xn--')) return true;
  const unicode = domainToUnicode(label);
  return unicode !== '' && unicode !== label && domainToASCII(unicode) === label;
}

/**
 * An apex the service can manage: a normalised host name under a public suffix and not a public
 * suffix itself, by the Public Suffix List (ICANN and private sections, through `tldts`: `com`,
 * `co.uk` and `github.io` are refused). A name under a suffix the list does not know (`example`,
 * `internal`) is taken under the list's default rule, which makes its last label the suffix.
 */
export function normalizeApex(input: string): NameCheck {
  const host = normalizeHostname(input);
  if (!host.ok) return host;
  const parsed = parse(host.name, { allowPrivateDomains: true, extractHostname: false });
  const listed = Boolean(parsed.isIcann || parsed.isPrivate);
  if (!host.name.includes('.') && !(listed && parsed.publicSuffix === host.name)) return { ok: false, reason: 'must have at least two labels' };
  if (!parsed.publicSuffix || parsed.domain === null || parsed.publicSuffix === host.name) {
    return { ok: false, reason: `is a public suffix (${parsed.publicSuffix ?? host.name}): register a name under it` };
  }
  return { ok: true, name: host.name };
}

/** The proper ancestors of a name, nearest first: `a.b.acme.dev` -> `b.acme.dev`, `acme.dev`, `dev`. */
export function ancestorsOf(name: string): string[] {
  const labels = name.split('.');
  return labels.slice(1).map((_label, i) => labels.slice(i + 1).join('.'));
}

/** Whether `hostname` lies strictly under `apex` (at a label boundary). */
export function isUnder(hostname: string, apex: string): boolean {
  return hostname.length > apex.length + 1 && hostname.endsWith(`.${apex}`);
}

/** The name of the TXT record that proves control of `apex`. */
export function verificationRecordName(apex: string): string {
  return `${VERIFICATION_LABEL}.${apex}`;
}
