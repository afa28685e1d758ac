import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { buildIfStale } from '@tools/workspace/build';
import { createTestApp } from '../support/app';
import { type BuiltProcess, startApi } from '../support/processes';

describe('Security headers (Helmet) and CORS', () => {
  describe('with the default configuration (no CORS_ORIGINS)', () => {
    let app: NestExpressApplication;

    beforeAll(async () => {
      app = await createTestApp();
    });

    afterAll(async () => {
      await app.close();
    });

    it("sends Helmet's headers on every answer, errors included", async () => {
      for (const path of ['/health/live', '/projects', '/no-such-route']) {
        const response = await request(app.getHttpServer()).get(path);
        expect(response.headers['content-security-policy']).toContain("default-src 'self'");
        expect(response.headers['content-security-policy']).toContain("script-src 'self'");
        expect(response.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
        expect(response.headers['x-content-type-options']).toBe('nosniff');
        expect(response.headers['x-frame-options']).toBe('SAMEORIGIN');
        expect(response.headers['strict-transport-security']).toMatch(/^max-age=\d+/);
        expect(response.headers['referrer-policy']).toBe('no-referrer');
        expect(response.headers['x-powered-by']).toBeUndefined();
      }
    });

    it('sends no CORS headers: not on a cross-origin request, not on a preflight', async () => {
      const simple = await request(app.getHttpServer()).get('/health/live').set('Origin', 'https://evil.example');
      expect(simple.status).toBe(200);
      expect(simple.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await request(app.getHttpServer())
        .options('/projects')
        .set('Origin', 'https://evil.example')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization,content-type');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      expect(preflight.headers['access-control-allow-methods']).toBeUndefined();
    });

    it('Swagger UI at /docs still works under the Content-Security-Policy: every script is a file of this origin, and each loads', async () => {
      const page = await request(app.getHttpServer()).get('/docs').expect(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      const csp = page.headers['content-security-policy'] as string;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self' https: 'unsafe-inline'");
      expect(csp).toContain("img-src 'self' data:");
      const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts.length).toBeGreaterThan(0);
      for (const [, attributes, inline] of scripts) {
        // An inline script would be refused by script-src 'self'.
        expect(inline.trim()).toBe('');
        const src = /src=["']([^"']+)["']/.exec(attributes)?.[1];
        expect(src).toBeDefined();
        expect(src).not.toMatch(/^(https?:)?\/\//);
        // Resolved as the browser does, against the page's URL.
        const url = new URL(src!, 'http://api.test/docs').pathname;
        const script = await request(app.getHttpServer()).get(url);
        expect({ url, status: script.status }).toEqual({ url, status: 200 });
        expect(script.headers['content-type']).toMatch(/javascript/);
      }
      for (const [, href] of page.text.matchAll(/<link[^>]+href=["']([^"']+)["']/g)) expect(href).not.toMatch(/^(https?:)?\/\//);
      await request(app.getHttpServer()).get('/docs-json').expect(200);
    });
  });

  describe('with CORS_ORIGINS (the built API)', () => {
    let api: BuiltProcess & { base: string };

    beforeAll(async () => {
      buildIfStale();
      api = await startApi({ CORS_ORIGINS: 'https://app.example.com,http://localhost:5173' });
    }, 240_000);

    afterAll(async () => {
      await api?.stop();
    });

    it('answers a listed origin, preflight included, and no other', async () => {
      const preflight = await fetch(`${api.base}/projects`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
      expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
      expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
      const simple = await fetch(`${api.base}/health/live`, { headers: { Origin: 'http://localhost:5173' } });
      expect(simple.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
      expect(simple.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
      const other = await fetch(`${api.base}/health/live`, { headers: { Origin: 'https://evil.example' } });
      expect(other.status).toBe(200);
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const otherPreflight = await fetch(`${api.base}/projects`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
      });
      expect(otherPreflight.headers.get('access-control-allow-origin')).toBeNull();
    });
  });
});
