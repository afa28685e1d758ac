/**
 * `node dist/healthcheck.js`: the image's HEALTHCHECK, for both commands of the image. It asks the
 * API's readiness (PORT, default 3000) and, when nothing listens there, the worker's (WORKER_HEALTH_PORT,
 * default 9465); exit 0 when one answers 200. No configuration loading, no dependencies: it must
 * answer in a second or two.
 */
const TIMEOUT_MS = 2_500;

async function ready(port: string): Promise<boolean> {
  const response = await fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  await response.arrayBuffer();
  return response.status === 200;
}

async function main(): Promise<number> {
  for (const port of [process.env.PORT || '3000', process.env.WORKER_HEALTH_PORT || '9465']) {
    try {
      return (await ready(port)) ? 0 : 1;
    } catch {
      // Nothing listens on this port: the other role, perhaps.
    }
  }
  return 1;
}

void main().then((code) => process.exit(code));
