import type { INestApplication } from '@nestjs/common';
import request from 'supertest';

export interface BrowserResponse {
  url: URL;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * A browser for the OAuth flow tests: one cookie jar for the API's origin (`apiOrigin`, served by
 * the Nest app in process), redirects followed by hand across the API and the provider emulator
 * (a real HTTP server), and the Accept header a browser sends on a navigation.
 */
export class OAuthTestBrowser {
  readonly cookies = new Map<string, string>();
  /** Every Set-Cookie the API sent, as sent. */
  readonly setCookies: string[] = [];

  constructor(
    private readonly app: INestApplication,
    private readonly apiOrigin = 'http://api.test',
  ) {}

  /** One navigation, no redirect followed. */
  async get(target: string | URL): Promise<BrowserResponse> {
    const url = new URL(target, this.apiOrigin);
    const accept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    if (url.origin === this.apiOrigin) {
      const req = request(this.app.getHttpServer()).get(`${url.pathname}${url.search}`).set('Accept', accept);
      if (this.cookies.size > 0) req.set('Cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
      const res = await req;
      const setCookie = res.headers['set-cookie'] as unknown as string[] | undefined;
      for (const line of setCookie ?? []) {
        this.setCookies.push(line);
        const [pair, ...attributes] = line.split(';');
        const eq = pair.indexOf('=');
        const name = pair.slice(0, eq).trim();
        const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
        if (expired) this.cookies.delete(name);
        else this.cookies.set(name, pair.slice(eq + 1).trim());
      }
      return { url, status: res.status, headers: res.headers, text: res.text };
    }
    const res = await fetch(url, { redirect: 'manual', headers: { Accept: accept } });
    return { url, status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
  }

  /**
   * Follows redirects from `target` while `keepGoing(next)` holds; answers the last response and
   * the redirect it did not follow (if any).
   */
  async follow(target: string | URL, keepGoing: (next: URL) => boolean): Promise<{ last: BrowserResponse; next?: URL }> {
    let last = await this.get(target);
    for (let hops = 0; hops < 10; hops++) {
      const location = last.headers.location;
      if (last.status < 300 || last.status >= 400 || typeof location !== 'string') return { last };
      const next = new URL(location, last.url);
      if (!keepGoing(next)) return { last, next };
      last = await this.get(next);
    }
    throw new Error('too many redirects');
  }
}
