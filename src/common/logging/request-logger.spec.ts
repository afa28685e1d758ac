import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { stdSerializers } from 'pino';
import { runInRequestContext } from '@/common/http/request-context';
import { accessLogMiddleware, AppLogger, createRootLogger, serializeRequest, serializeResponse } from './request-logger';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, stream };
}

describe('request logger', () => {
  it('serialises req and res as pino-std-serializers followed by the old custom serializers did', () => {
    const req = { id: 'r1', method: 'GET', originalUrl: '/projects?access_token=abc', url: '/x', headers: { authorization: 'Bearer x' }, socket: {} };
    const std = stdSerializers.req(req as never);
    expect(serializeRequest(req)).toEqual({ id: std.id, method: std.method, url: '/projects?access_token=[redacted]' });
    expect(serializeRequest({ id: 'r2', method: 'POST', url: '/a' })).toEqual({ id: 'r2', method: 'POST', url: '/a' });
    expect(serializeResponse({ headersSent: true, statusCode: 201 })).toEqual({ statusCode: 201 });
    expect(serializeResponse({ headersSent: false, statusCode: 200 })).toEqual({ statusCode: null });
  });

  describe('over HTTP', () => {
    let server: Server;
    let base: string;
    const { lines, stream } = capture();
    const root = createRootLogger('info', stream);
    const logger = new AppLogger(root);
    const access = accessLogMiddleware(root);

    beforeAll(async () => {
      server = createServer((req, res) => {
        const id = String(req.headers['x-request-id']);
        runInRequestContext(id, () =>
          access(Object.assign(req, { id, originalUrl: req.url }), res, () => {
            logger.warn({ step: 'inside' }, 'during the request', 'Context');
            res.statusCode = req.url === '/fail' ? 500 : 200;
            res.end('{}');
          }),
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('writes one access line per request, fields in the order pino-http wrote them, and binds req to lines logged meanwhile', async () => {
      await fetch(`${base}/projects?token=secret`, { headers: { 'x-request-id': 'a1' } });
      await fetch(`${base}/fail`, { headers: { 'x-request-id': 'a2' } });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const [inside, completed, insideFail, errored] = lines;
      expect(Object.keys(inside)).toEqual(['level', 'time', 'pid', 'hostname', 'req', 'context', 'step', 'msg']);
      expect(inside).toMatchObject({
        level: 40,
        req: { id: 'a1', method: 'GET', url: '/projects?token=[redacted]' },
        context: 'Context',
        msg: 'during the request',
      });
      expect(Object.keys(completed)).toEqual(['level', 'time', 'pid', 'hostname', 'req', 'res', 'responseTime', 'msg']);
      expect(completed).toMatchObject({
        level: 30,
        req: { id: 'a1', method: 'GET', url: '/projects?token=[redacted]' },
        res: { statusCode: 200 },
        msg: 'request completed',
      });
      expect(insideFail).toMatchObject({ req: { id: 'a2' } });
      expect(Object.keys(errored)).toEqual(['level', 'time', 'pid', 'hostname', 'req', 'res', 'err', 'responseTime', 'msg']);
      expect(errored).toMatchObject({ level: 50, res: { statusCode: 500 }, err: { message: 'failed with status code 500' }, msg: 'request errored' });
      expect(lines).toHaveLength(4);
    });

    it('logs outside a request without req', () => {
      logger.log('plain', 'Boot');
      expect(lines[lines.length - 1]).toMatchObject({ level: 30, context: 'Boot', msg: 'plain' });
      expect(lines[lines.length - 1]).not.toHaveProperty('req');
    });
  });
});
