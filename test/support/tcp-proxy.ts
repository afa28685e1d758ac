import net from 'node:net';

type Mode = 'pass' | 'pause' | 'refuse';

interface Link {
  client: net.Socket;
  upstream?: net.Socket;
  toUpstream: Buffer[];
  toClient: Buffer[];
  clientGone: boolean;
  upstreamGone: boolean;
}

/**
 * A TCP proxy in front of a real server (Postgres, Redis) that a fault test can switch between
 * passing bytes, black-holing them (`pause`: connections are accepted and kept, nothing is
 * forwarded either way, including on connections opened before), refusing connections (`refuse`:
 * the listener closes and open connections are reset) and passing again (`resume`). Bytes held
 * during a pause are delivered on resume, as TCP would after a short partition.
 */
export class TcpProxy {
  private server?: net.Server;
  private mode: Mode = 'pass';
  private readonly links = new Set<Link>();

  private constructor(
    private readonly target: { host: string; port: number },
    public port: number,
  ) {}

  /** Starts a proxy on a free local port in front of the host and port of `targetUrl`. */
  static async start(targetUrl: string): Promise<TcpProxy> {
    const url = new URL(targetUrl);
    const proxy = new TcpProxy({ host: url.hostname, port: Number(url.port) }, 0);
    await proxy.listen();
    return proxy;
  }

  /** `url` with its host and port replaced by this proxy's. */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  get connections(): number {
    return this.links.size;
  }

  pause(): void {
    if (this.mode === 'refuse') throw new Error('resume a refusing proxy before pausing it');
    this.mode = 'pause';
  }

  async refuse(): Promise<void> {
    this.mode = 'refuse';
    const server = this.server;
    this.server = undefined;
    for (const link of this.links) {
      link.client.resetAndDestroy();
      link.upstream?.destroy();
    }
    this.links.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async resume(): Promise<void> {
    const wasRefusing = this.mode === 'refuse';
    this.mode = 'pass';
    if (wasRefusing) await this.listen();
    for (const link of [...this.links]) {
      if (!link.upstream) this.connectUpstream(link);
      else this.flush(link);
    }
  }

  async close(): Promise<void> {
    await this.refuse();
  }

  private async listen(): Promise<void> {
    const server = net.createServer({ allowHalfOpen: false }, (client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  private accept(client: net.Socket): void {
    const link: Link = { client, toUpstream: [], toClient: [], clientGone: false, upstreamGone: false };
    this.links.add(link);
    client.on('error', () => undefined);
    client.on('data', (chunk) => {
      link.toUpstream.push(chunk);
      this.flush(link);
    });
    client.on('close', () => {
      link.clientGone = true;
      this.flush(link);
    });
    if (this.mode === 'pass') this.connectUpstream(link);
  }

  private connectUpstream(link: Link): void {
    const upstream = net.connect(this.target.port, this.target.host);
    link.upstream = upstream;
    upstream.on('error', () => undefined);
    upstream.on('connect', () => this.flush(link));
    upstream.on('data', (chunk) => {
      link.toClient.push(chunk);
      this.flush(link);
    });
    upstream.on('close', () => {
      link.upstreamGone = true;
      this.flush(link);
    });
  }

  /** Moves held bytes and closes across, unless black-holed. */
  private flush(link: Link): void {
    if (this.mode !== 'pass') return;
    const { client, upstream } = link;
    if (upstream && !upstream.connecting) {
      for (const chunk of link.toUpstream.splice(0)) if (!upstream.destroyed) upstream.write(chunk);
    }
    for (const chunk of link.toClient.splice(0)) if (!client.destroyed) client.write(chunk);
    if (link.clientGone) {
      if (upstream && !upstream.connecting) upstream.end();
      else upstream?.destroy();
      if (!upstream || upstream.destroyed || !upstream.connecting) this.links.delete(link);
    }
    if (link.upstreamGone) {
      client.end();
      this.links.delete(link);
    }
  }
}
