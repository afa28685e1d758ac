import { ResponseTooLargeError } from '@/common/net/host-guard';
import { PageRefusedFailure } from './git-provider.port';

/**
 * JSON values in a JSON text, counted without parsing it: one per `{` and `[`, and one more per
 * `,` (each separates two values or members), outside strings. `JSON.parse` turns a 4 MB text of
 * `[{},{},…]` into 1.4 million objects (about 90 MB of heap); counting first keeps what a page can
 * cost once parsed proportional to a number the import chooses, not to the provider's whim.
 */
export function jsonValueCount(body: Uint8Array): number {
  let count = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i];
    if (inString) {
      if (byte === 0x5c)
        i++; // a backslash escapes the next byte
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x7b || byte === 0x5b || byte === 0x2c) count++;
  }
  return count;
}

/**
 * A `fetch` for the CI usage reader: counts the bytes of every answer in `meter.bytes` and, when
 * `limits` are given, refuses (PageRefusedFailure) an answer the inner fetch dropped for its size
 * or one holding more JSON values than `limits.maxValues`, before the client parses it.
 */
export function meteredPages(inner: typeof fetch, limits?: { maxBytes: number; maxValues: number }): { fetch: typeof fetch; meter: { bytes: number } } {
  const meter = { bytes: 0 };
  const metered = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (error) {
      if (error instanceof ResponseTooLargeError && limits) {
        meter.bytes += limits.maxBytes;
        throw new PageRefusedFailure(`the provider sent a page larger than ${limits.maxBytes} bytes (USAGE_IMPORT_MAX_PAGE_BYTES)`);
      }
      throw error;
    }
    const body = new Uint8Array(await response.arrayBuffer());
    meter.bytes += body.byteLength;
    if (limits && response.status < 300) {
      const values = jsonValueCount(body);
      if (values > limits.maxValues)
        throw new PageRefusedFailure(`the provider sent a page of ${values} JSON values, more than the ${limits.maxValues} a usage import parses`);
    }
    const nullBody = response.status === 204 || response.status === 304;
    const copy = new Response(nullBody ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers });
    // Clients read `response.url` (Octokit's pagination does); a constructed Response has none.
    Object.defineProperty(copy, 'url', { value: response.url });
    return copy;
  };
  return { fetch: metered as typeof fetch, meter };
}
