/**
 * LOG_FORMAT=text: each JSON line pino writes becomes one line a person reads in a terminal, e.g.
 * `12:04:05 WARN  request completed  POST /merge-queues/…/entries 409 (3 ms)  req=9f1c…`, with an
 * error's stack below it. pino-pretty does the same as a worker-thread transport; this is a few
 * lines over the stream pino already writes, so redaction (its streamWrite hook) runs first and
 * nothing is added to the dependencies.
 */
import type { DestinationStream } from 'pino';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** What every line carries and the readable line does not repeat. */
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'req', 'res', 'responseTime', 'err']);

function field(value: unknown): string {
  if (typeof value === 'string') return /\s/.test(value) || value === '' ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

function clock(time: unknown): string {
  const date = typeof time === 'number' ? new Date(time) : new Date();
  return date.toISOString().slice(11, 19);
}

/** One JSON log line as a readable line (and an error's stack, indented, below it); a line that is not JSON is kept as it is. */
export function readableLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  if (typeof entry !== 'object' || entry === null) return `${line.trimEnd()}\n`;
  const level = (LEVELS[Number(entry.level)] ?? String(entry.level)).padEnd(5);
  const parts = [`${clock(entry.time)} ${level} ${typeof entry.msg === 'string' ? entry.msg : ''}`.trimEnd()];
  const req = entry.req as { id?: unknown; method?: unknown; url?: unknown } | undefined;
  const res = entry.res as { statusCode?: unknown } | undefined;
  if (req?.method || req?.url) {
    const status = res?.statusCode ?? '';
    const took = typeof entry.responseTime === 'number' ? ` (${entry.responseTime} ms)` : '';
    parts.push(`${String(req.method ?? '')} ${String(req.url ?? '')} ${String(status)}`.trim() + took);
  }
  const fields = Object.entries(entry)
    .filter(([key, value]) => !OMITTED.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${field(value)}`);
  if (req?.id) fields.push(`req=${field(req.id)}`);
  if (fields.length) parts.push(fields.join(' '));
  let text = parts.join('  ');
  const err = entry.err as { message?: unknown; stack?: unknown } | undefined;
  if (err) {
    const stack = typeof err.stack === 'string' && err.stack ? err.stack : String(err.message ?? '');
    text += `\n${stack
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n')}`;
  }
  return `${text}\n`;
}

/** A destination that writes each line readable (synchronously: a warning shows when it happens). */
export function readableDestination(out: { write(chunk: string): unknown }): DestinationStream {
  return {
    write(chunk: string): void {
      // pino writes one line per call; split anyway, so that a line is never half-formatted.
      for (const line of chunk.split('\n')) if (line) out.write(readableLine(line));
    },
  };
}
