import type { ErrorEntry } from './error-catalogue';
import type { ErrorDetailSection } from './error-body';

export interface AppErrorOptions {
  message?: string;
  description?: string;
  details?: ErrorDetailSection[];
  metadata?: Record<string, unknown>;
  action?: { label: string; url: string };
  /** Extra response headers, such as Retry-After. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** A failure with a catalogue entry. Services throw these; the exception filter renders them. */
export class AppError extends Error {
  constructor(
    readonly entry: ErrorEntry,
    readonly options: AppErrorOptions = {},
  ) {
    super(options.message ?? entry.message, { cause: options.cause });
  }

  get status(): number {
    return this.entry.status;
  }
}
