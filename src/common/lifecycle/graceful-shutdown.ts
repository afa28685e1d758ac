import type { Server } from 'node:http';
import type { AppConfig } from '@/common/config/app-config';
import { processLine } from '@/common/logging/startup-line';

/** This process's own lifecycle (not shared state: each process drains itself). */
export const lifecycle = { shuttingDown: false };

function write(stream: NodeJS.WriteStream, line: string | undefined): void {
  if (line) stream.write(line);
}

/**
 * SIGTERM (and SIGINT): run `stop` once, and exit 0 when it is done; exit 1 if it has not finished
 * within `graceMs` (what is still running is abandoned: a BullMQ job's lock then expires and another
 * worker takes the job over; a merge-queue operation is crash-safe by design).
 */
export function exitGracefullyOnSignals(
  name: string,
  graceMs: number,
  stop: (signal: NodeJS.Signals) => Promise<void>,
  /** LOG_LEVEL and LOG_FORMAT for its lines (stopping, stopped: info; failures: error). */
  config?: Pick<AppConfig, 'logLevel' | 'logFormat'>,
): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    lifecycle.shuttingDown = true;
    write(process.stdout, processLine(config, 'info', `${name} stopping`, { time: Date.now(), signal, graceMs }));
    const startedAt = Date.now();
    setTimeout(() => {
      write(process.stderr, processLine(config, 'error', `${name} did not stop within the grace period: exiting`, { time: Date.now(), graceMs }));
      process.exit(1);
    }, graceMs).unref();
    stop(signal).then(
      () => {
        write(process.stdout, processLine(config, 'info', `${name} stopped`, { time: Date.now(), ms: Date.now() - startedAt }));
        process.exit(0);
      },
      (error: unknown) => {
        write(
          process.stderr,
          processLine(config, 'error', `${name} failed to stop cleanly`, { time: Date.now(), error: error instanceof Error ? error.message : String(error) }),
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
