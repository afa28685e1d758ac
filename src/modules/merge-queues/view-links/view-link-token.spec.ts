import { redactUrl } from '@/common/logging/redaction';
import { signViewLink, verifyViewLink, viewLinkKey } from './view-link-token';

const KEY = viewLinkKey(Buffer.alloc(32, 1));
const OLD_KEY = viewLinkKey(Buffer.alloc(32, 2));
const LINK = '0192f3a4-5b6c-7d8e-9f01-23456789abcd';
const QUEUE = '0192f3a4-0000-7000-8000-000000000001';
const EXPIRES = new Date('2026-12-01T00:00:00.000Z');
const NOW = new Date('2026-11-29T00:00:00.000Z');

describe('view-link tokens', () => {
  const token = signViewLink(KEY, { linkId: LINK, queueId: QUEUE, expiresAt: EXPIRES });

  it('verifies a token it signed, for its queue, before its expiry', () => {
    expect(token).toMatch(/^dpqv_[0-9a-f]{32}_\d+_[A-Za-z0-9_-]{43}$/);
    expect(verifyViewLink([KEY], token, QUEUE, NOW)).toEqual({ linkId: LINK, expiresAt: EXPIRES });
  });

  it('verifies under an older key kept while keys rotate, and not under an unrelated one', () => {
    const old = signViewLink(OLD_KEY, { linkId: LINK, queueId: QUEUE, expiresAt: EXPIRES });
    expect(verifyViewLink([KEY, OLD_KEY], old, QUEUE, NOW)).not.toBeNull();
    expect(verifyViewLink([KEY], old, QUEUE, NOW)).toBeNull();
  });

  it('refuses a token for another queue, past its expiry, or changed in any part', () => {
    expect(verifyViewLink([KEY], token, '0192f3a4-0000-7000-8000-000000000002', NOW)).toBeNull();
    expect(verifyViewLink([KEY], token, QUEUE, EXPIRES)).toBeNull();
    const [, id, expiry, mac] = /^dpqv_([0-9a-f]{32})_(\d+)_(.+)$/.exec(token)!;
    const flip = (s: string, i: number) => `${s.slice(0, i)}${s[i] === 'a' ? 'b' : 'a'}${s.slice(i + 1)}`;
    expect(verifyViewLink([KEY], `dpqv_${flip(id, 0)}_${expiry}_${mac}`, QUEUE, NOW)).toBeNull();
    expect(verifyViewLink([KEY], `dpqv_${id}_${Number(expiry) + 86_400}_${mac}`, QUEUE, NOW)).toBeNull();
    expect(verifyViewLink([KEY], `dpqv_${id}_${expiry}_${flip(mac, 5)}`, QUEUE, NOW)).toBeNull();
    expect(verifyViewLink([KEY], `${token}x`, QUEUE, NOW)).toBeNull();
    expect(verifyViewLink([KEY], '', QUEUE, NOW)).toBeNull();
  });

  it('has a shape the logs redact, valid or not', () => {
    expect(redactUrl(`/view/merge-queues/q/${token}?pr=1`)).toBe('/view/merge-queues/q/[redacted]?pr=1');
    expect(redactUrl('/view/merge-queues/q/dpqv_garbage')).toBe('/view/merge-queues/q/[redacted]');
  });
});
