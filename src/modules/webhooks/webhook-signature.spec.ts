import { signatureMatches, signBody } from './webhook-signature';

describe(signatureMatches.name, () => {
  const secret = 'whsec_test-secret';
  const body = Buffer.from('{"action":"synchronize","number":7}');
  const good = signBody(body, secret);

  it('accepts the HMAC SHA-256 of the exact bytes, in either hex case', () => {
    expect(signatureMatches(body, good, secret)).toBe(true);
    expect(signatureMatches(body, `sha256=${good.slice(7).toUpperCase()}`, secret)).toBe(true);
  });

  it('refuses another secret, another body (one byte), or the body re-serialised', () => {
    expect(signatureMatches(body, good, 'another')).toBe(false);
    expect(signatureMatches(Buffer.from('{"action":"synchronize","number":8}'), good, secret)).toBe(false);
    expect(signatureMatches(Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 1)), good, secret)).toBe(false);
  });

  it('refuses a missing or empty header and other algorithms', () => {
    expect(signatureMatches(body, undefined, secret)).toBe(false);
    expect(signatureMatches(body, '', secret)).toBe(false);
    expect(signatureMatches(body, good.slice(7), secret)).toBe(false);
    expect(signatureMatches(body, `sha1=${good.slice(7, 47)}`, secret)).toBe(false);
  });

  it('refuses a signature of the wrong length (shorter, longer, a prefix of the right one) without throwing', () => {
    expect(signatureMatches(body, good.slice(0, -2), secret)).toBe(false);
    expect(signatureMatches(body, `${good}00`, secret)).toBe(false);
    expect(signatureMatches(body, 'sha256=', secret)).toBe(false);
    expect(signatureMatches(body, `sha256=${'0'.repeat(63)}`, secret)).toBe(false);
  });

  it('refuses non-hex digits of the right length (Buffer.from would silently drop them)', () => {
    const nonHex = `sha256=${'zz'}${good.slice(9)}`;
    expect(nonHex.length).toBe(good.length);
    expect(signatureMatches(body, nonHex, secret)).toBe(false);
    expect(signatureMatches(body, `sha256=${good.slice(7, 69)}g1`, secret)).toBe(false);
    expect(signatureMatches(body, `sha256=${'é'.repeat(32)}`, secret)).toBe(false);
  });
});
