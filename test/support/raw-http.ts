import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
  ms: number;
}

export interface RawRequest {
  method: string;
  /** Sent as written: `%00` stays `%00`. */
  path: string;
  headers?: Record<string, string>;
  /** Sent with a Content-Length and nothing else: no Content-Type is added. */
  body?: string | Buffer;
}

/**
 * HTTP requests byte for byte, where supertest would add a Content-Type, encode a path or
 * serialise a body: the abuse suite needs exactly what it wrote on the wire.
 */
export class RawClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

  private constructor(private readonly port: number) {}

  static async listen(app: INestApplication): Promise<RawClient> {
    await app.listen(0, '127.0.0.1');
    return new RawClient((app.getHttpServer().address() as AddressInfo).port);
  }

  send(request: RawRequest): Promise<RawResponse> {
    const started = performance.now();
    const body = request.body === undefined ? undefined : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body, 'utf8');
    const headers: Record<string, string> = { ...(request.headers ?? {}) };
    if (body) headers['Content-Length'] = String(body.length);
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: this.port, method: request.method.toUpperCase(), path: request.path, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: performance.now() - started });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
