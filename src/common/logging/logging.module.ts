import { Global, Module, OnApplicationShutdown } from '@nestjs/common';
import { destination } from 'pino';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { readableDestination } from './readable-lines';
import { AppLogger, createRootLogger } from './request-logger';

// JSON: buffered writes to stdout, one syscall per 4 KiB of logs instead of one per line. The bench
// showed per-line writes at 14% of the API's CPU. Flushed at shutdown (see LoggingModule).
let logDestination: ReturnType<typeof destination> | undefined;

/** Where the logger writes: buffered JSON lines, or (LOG_FORMAT=text) readable lines written at once. */
function destinationFor(config: AppConfig) {
  if (config.logFormat === 'text') return readableDestination(process.stdout);
  logDestination ??= destination({ dest: 1, sync: false, minLength: 4096 });
  return logDestination;
}

/**
 * Structured JSON logs (or readable lines, LOG_FORMAT=text) with the request id; credentials are removed before anything is written.
 * `AppLogger` is Nest's logger (`app.useLogger`); the API's access log is mounted by configureApp.
 */
@Global()
@Module({
  providers: [
    { provide: AppLogger, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new AppLogger(createRootLogger(config.logLevel, destinationFor(config))) },
  ],
  exports: [AppLogger],
})
export class LoggingModule implements OnApplicationShutdown {
  /** Nest re-raises SIGTERM after closing, so nothing would flush the buffer on 'exit'. */
  onApplicationShutdown(): void {
    try {
      logDestination?.flushSync();
    } catch {
      // nothing buffered, or stdout already closed
    }
  }
}
