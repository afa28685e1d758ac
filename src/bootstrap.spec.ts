import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import helmet from 'helmet';
import { HELMET_OPTIONS, securityHeaders } from './bootstrap';

function response(): ServerResponse {
  const res = new ServerResponse(new IncomingMessage(new Socket()));
  res.setHeader('X-Powered-By', 'Express');
  res.setHeader('X-Request-Id', 'r-1');
  return res;
}

describe(securityHeaders.name, () => {
  it("sets exactly the headers Helmet's own middleware sets with the same options, and removes what it removes", () => {
    const ours = response();
    const next = jest.fn();
    securityHeaders()({} as IncomingMessage, ours, next);
    expect(next).toHaveBeenCalledWith();

    const theirs = response();
    helmet(HELMET_OPTIONS)({} as IncomingMessage, theirs, () => undefined);

    expect(ours.getHeaders()).toEqual(theirs.getHeaders());
    expect(Object.keys(ours.getHeaders()).length).toBeGreaterThan(10);
    expect(ours.getHeader('x-powered-by')).toBeUndefined();
    expect(ours.getHeader('x-request-id')).toBe('r-1');
    expect(ours.getHeader('content-security-policy')).toContain("default-src 'self'");
    expect(ours.getHeader('content-security-policy')).not.toContain('upgrade-insecure-requests');
  });
});
