/** What the HTTP benchmarks share: waiting for a server, and driving one URL with autocannon. */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';

export const CONNECTIONS = 50;

/** What a built API process needs to run as in production (NODE_ENV=production wants real credential keys); metrics and worker health listeners on free ports. */
export function productionEnv(): NodeJS.ProcessEnv {
  return { NODE_ENV: 'production', CREDENTIALS_KEYS: `bench:${randomBytes(32).toString('base64')}`, METRICS_PORT: '0', WORKER_HEALTH_PORT: '0' };
}

export interface Measurement {
  rps: number;
  p99: number;
  non2xx: number;
  requests: number;
  /** The machine's 1-minute load average at the end of the run: other work competes for the cores. */
  load: number;
}

export async function waitForOk(url: string, headers: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(url, { headers })).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer`);
}

export async function drive(url: string, headers: Record<string, string>, durationS: number): Promise<Measurement> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: durationS, headers });
  return { rps: result.requests.average, p99: result.latency.p99, non2xx: result.non2xx + result.errors, requests: result.requests.total, load: loadavg()[0] };
}
