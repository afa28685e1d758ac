import { addressRefusal, checkHostUrl } from './host-policy';

const strict = { allowHttp: false, allowPrivateHosts: false };
const onPremises = { allowHttp: true, allowPrivateHosts: true };

describe(addressRefusal.name, () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local'],
  ])('refuses %s (%s)', (address, why) => {
    expect(addressRefusal(address, strict)).toContain(why);
  });

  it('accepts public unicast addresses', () => {
    expect(addressRefusal('140.82.112.3', strict)).toBeUndefined();
    expect(addressRefusal('2606:4700::1111', strict)).toBeUndefined();
  });

  it('opens private ranges only when configured, never link-local or unspecified', () => {
    expect(addressRefusal('127.0.0.1', onPremises)).toBeUndefined();
    expect(addressRefusal('10.0.0.1', onPremises)).toBeUndefined();
    expect(addressRefusal('169.254.169.254', onPremises)).toContain('link-local');
    expect(addressRefusal('0.0.0.0', onPremises)).toContain('unspecified');
  });
});

describe('cloud metadata addresses with private hosts allowed', () => {
  it.each([
    ['169.254.169.254', 'AWS, GCP, Azure, OpenStack (IPv4)'],
    ['::ffff:169.254.169.254', 'IPv4-mapped IPv6'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped IPv6, hex'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'IPv4-mapped IPv6, long form'],
    ['::169.254.169.254', 'IPv4-compatible IPv6'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata address'],
    ['2002:a9fe:a9fe::1', '6to4 of the metadata address'],
    ['fd00:ec2::254', 'AWS IMDS over IPv6'],
    ['[fd00:ec2::254]', 'AWS IMDS over IPv6, bracketed'],
    ['fd00:ec2:0:0:0:0:0:254', 'AWS IMDS over IPv6, long form'],
    ['fd20:ce::254', 'GCP metadata over IPv6'],
    ['100.100.100.200', 'Alibaba Cloud'],
    ['::ffff:100.100.100.200', 'Alibaba Cloud, IPv4-mapped'],
    ['168.63.129.16', 'Azure WireServer'],
    ['192.0.0.192', 'Oracle Cloud (legacy)'],
  ])('refuses %s (%s)', (address) => {
    expect(addressRefusal(address, onPremises)).toBeDefined();
    expect(addressRefusal(address, strict)).toBeDefined();
  });

  it('still opens the rest of the private ranges', () => {
    for (const address of ['10.0.0.1', '100.64.0.1', '100.100.100.201', 'fd00:ec2::253', 'fd12:3456::1', '::ffff:10.0.0.1'])
      expect([address, addressRefusal(address, onPremises)]).toEqual([address, undefined]);
  });

  it('refuses a metadata address given as a URL host in every form', () => {
    for (const raw of [
      'http://[::ffff:169.254.169.254]',
      'http://[fd00:ec2::254]/latest/meta-data',
      'http://100.100.100.200',
      'http://0xa9fea9fe',
      'http://2852039166',
      'http://169.254.169.254.',
      'http://[::ffff:6464:64c8]',
    ]) {
      const result = checkHostUrl(raw, onPremises);
      expect([raw, result.ok]).toEqual([raw, false]);
    }
  });
});

describe('IPv6 spellings of the metadata address are judged as 169.254.169.254', () => {
  it.each([
    ['::a9fe:a9fe', 'IPv4-compatible'],
    ['[::a9fe:a9fe]', 'IPv4-compatible, bracketed'],
    ['0:0:0:0:0:0:a9fe:a9fe', 'IPv4-compatible, long form'],
    ['::169.254.169.254', 'IPv4-compatible, dotted'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped'],
    ['::ffff:0:a9fe:a9fe', 'IPv4-translated (SIIT)'],
    ['64:ff9b::a9fe:a9fe', 'NAT64'],
    ['64:ff9b::169.254.169.254', 'NAT64, dotted'],
    ['64:ff9b:1::a9fe:a9fe', 'local-use NAT64 (RFC 8215)'],
    ['2002:a9fe:a9fe::1', '6to4'],
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'Teredo (client address inverted)'],
  ])('%s (%s) names the metadata address under every policy', (address) => {
    for (const policy of [strict, onPremises]) {
      const refusal = addressRefusal(address, policy);
      expect([address, refusal]).toEqual([address, expect.stringContaining('169.254.169.254')]);
      expect(refusal).toContain('link-local');
    }
  });

  it('an IPv4-compatible address is judged as the IPv4 address: ::7f00:1 is loopback, ::a00:1 private, ::8c52:7003 public', () => {
    expect(addressRefusal('::7f00:1', strict)).toContain('loopback');
    expect(addressRefusal('::a00:1', strict)).toContain('private');
    expect(addressRefusal('::a00:1', onPremises)).toBeUndefined();
    expect(addressRefusal('::8c52:7003', strict)).toBeUndefined();
    // :: and ::1 stay the IPv6 unspecified and loopback addresses.
    expect(addressRefusal('::', onPremises)).toContain('unspecified');
    expect(addressRefusal('::1', strict)).toContain('loopback');
  });

  it('refuses the metadata address as an IPv4-compatible URL host', () => {
    for (const raw of ['http://[::a9fe:a9fe]', 'http://[::a9fe:a9fe]/latest/meta-data', 'https://[64:ff9b::a9fe:a9fe]']) {
      const result = checkHostUrl(raw, onPremises);
      expect([raw, result.ok, !result.ok && result.reason]).toEqual([raw, false, expect.stringContaining('169.254.169.254')]);
    }
  });
});

describe(checkHostUrl.name, () => {
  it.each([
    ['http://git.example.com', 'https'],
    ['ftp://git.example.com', 'https'],
    ['https://user:pw@git.example.com', 'user name'],
    ['https://user@git.example.com', 'user name'],
    ['https://git.example.com/?a=1', 'query'],
    ['https://git.example.com/?', 'query'],
    ['https://git.example.com/#x', 'fragment'],
    ['https://127.0.0.1', 'loopback'],
    ['https://[::1]', 'loopback'],
    ['https://169.254.169.254', 'link-local'],
    ['https://0x7f.1', 'loopback'],
    ['https://2130706433', 'loopback'],
    ['https://[::ffff:7f00:1]', 'loopback'],
    ['not a url', 'absolute URL'],
  ])('refuses %s', (raw, why) => {
    const result = checkHostUrl(raw, strict);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toContain(why);
  });

  it('normalizes an accepted URL', () => {
    expect(checkHostUrl('https://Git.Example.com/gitlab/', strict)).toMatchObject({ ok: true, normalized: 'https://git.example.com/gitlab', ipLiteral: false });
    expect(checkHostUrl('http://127.0.0.1:8080', onPremises)).toMatchObject({ ok: true, normalized: 'http://127.0.0.1:8080', ipLiteral: true });
  });
});
