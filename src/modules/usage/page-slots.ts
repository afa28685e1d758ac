/**
 * Slots for provider pages in flight in one worker process, shared by all of its usage imports:
 * a page is downloaded, parsed and written while it holds a slot, so a worker never holds more
 * than `size` pages (each at most USAGE_IMPORT_MAX_PAGE_BYTES) however many imports it runs.
 * Per process on purpose: what it bounds is this process's memory. No Nest, Prisma or I/O here.
 */
export class PageSlots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Runs `work` holding a slot; waiting for one ends (with the signal's reason) when `signal` aborts. */
  async with<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const granted = () => {
        signal?.removeEventListener('abort', aborted);
        resolve();
      };
      const aborted = () => {
        const index = this.waiting.indexOf(granted);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(signal?.reason);
      };
      this.waiting.push(granted);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
