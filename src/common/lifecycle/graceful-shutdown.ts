import type { Server } from 'node:http';

/** This process's own lifecycle (not shared state: each process drains itself). */
export const lifecycle = { shuttingDown: false };

function log(msg: string, extra: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), msg, ...extra })}\n`);
}

/**
 * SIGTERM (and SIGINT): run `stop` once, and exit 0 when it is done; exit 1 if it has not finished
 * within `graceMs` (what is still running is abandoned: a BullMQ job's lock then expires and another
 * worker takes the job over; a merge-queue operation is crash-safe by design).
 */
export function exitGracefullyOnSignals(name: string, graceMs: number, stop: (signal: NodeJS.Signals) => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    lifecycle.shuttingDown = true;
    log(`${name} stopping`, { signal, graceMs });
    const startedAt = Date.now();
    setTimeout(() => {
      process.stderr.write(`${JSON.stringify({ level: 50, time: Date.now(), msg: `${name} did not stop within the grace period: exiting`, graceMs })}\n`);
      process.exit(1);
    }, graceMs).unref();
    stop(signal).then(
      () => {
        log(`${name} stopped`, { ms: Date.now() - startedAt });
        process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(
          `${JSON.stringify({ level: 50, time: Date.now(), msg: `${name} failed to stop cleanly`, error: error instanceof Error ? error.message : String(error) })}\n`,
        );
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/**
 * Stops accepting connections and resolves once every request in flight has been answered. Idle
 * keep-alive connections are closed at once, busy ones as soon as their response is sent.
 */
export function drainHttpServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(idle);
      resolve();
    });
    server.closeIdleConnections();
  });
}
