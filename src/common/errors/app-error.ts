import { ErrorCatalogue, ErrorCatalogueEntry, ErrorCatalogueKey } from './error-catalogue';
import type { ErrorDetailSection } from './error-body';

export interface AppErrorOptions {
  message?: string;
  description?: string;
  details?: ErrorDetailSection[];
  metadata?: Record<string, unknown>;
  action?: { label: string; url: string };
  cause?: unknown;
}

/** A failure with a catalogue code. Services throw these; the exception filter renders them. */
export class AppError extends Error {
  readonly entry: ErrorCatalogueEntry;

  constructor(
    key: ErrorCatalogueKey,
    readonly options: AppErrorOptions = {},
  ) {
    super(options.message ?? ErrorCatalogue[key].message, { cause: options.cause });
    this.entry = ErrorCatalogue[key];
  }

  get status(): number {
    return this.entry.status;
  }
}
