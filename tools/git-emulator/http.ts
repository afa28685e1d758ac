/**
 * The emulator's HTTP plumbing: the route table every concern file contributes to, reading bodies,
 * answering JSON, GitHub's `Link` pagination and its timestamp format.
 */
import type http from 'node:http';

/** One request as a route sees it; `login` is the authenticated user on `auth: 'user'` routes ('' elsewhere). */
export interface RouteContext {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  url: URL;
  /** The path with GitHub Enterprise Server's `/api/v3` prefix removed. */
  path: string;
  method: string;
  body: string;
  login: string;
}

/**
 * A route of the GitHub API. `auth`: `none` (answered before any credential is looked at), `app`
 * (the route checks the app's JWT itself) or `user` (a user or installation token, else 401).
 * Without `method` the route takes every method and answers the wrong ones itself.
 */
export interface Route {
  method?: string;
  path: RegExp;
  auth: 'none' | 'app' | 'user';
  handle(ctx: RouteContext, match: RegExpMatchArray): void | Promise<void>;
}

const PER_PAGE_DEFAULT = 30;

export function send(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  if (status === 204) return void res.writeHead(204).end();
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/** A GitHub error answer: `message`, `documentation_url` (GitHub sends one with every error) and `status`, plus `extra` (`errors`...). */
export function fail(res: http.ServerResponse, status: number, message: string, extra: Record<string, unknown> = {}): void {
  send(res, status, { message, documentation_url: 'https://docs.github.com/rest', status: String(status), ...extra });
}

export function redirect(res: http.ServerResponse, location: string): void {
  res.writeHead(302, { location });
  res.end();
}

export function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

/** A JSON body, or a form-encoded one (the OAuth token endpoint takes both). */
export function parseForm(body: string): Record<string, string | undefined> {
  try {
    return JSON.parse(body) as Record<string, string>;
  } catch {
    return Object.fromEntries(new URLSearchParams(body));
  }
}

export function perPage(url: URL): number {
  return Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? PER_PAGE_DEFAULT) || PER_PAGE_DEFAULT));
}

/** One page of `items`, with GitHub's `Link` header (next, last, first, prev) when there are more pages. */
export function paginate<T>(items: T[], url: URL, res: http.ServerResponse): T[] {
  const size = perPage(url);
  const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / size));
  const link = (p: number, rel: string) => {
    const target = new URL(url.toString());
    target.searchParams.set('page', String(p));
    target.searchParams.set('per_page', String(size));
    return `<${target.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(page - 1, 'prev'), link(1, 'first'));
  if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
  if (links.length) res.setHeader('link', links.join(', '));
  return items.slice((page - 1) * size, page * size);
}

/**
 * The git failure knob (git database, compare, merges and GraphQL share it): answers
 * `gitFailureStatus` (502 unless set), with `Retry-After` when set, and says it did.
 */
export function gitFailure(knobs: { gitFailures: number; gitFailureStatus?: number; gitFailureRetryAfter?: string }, res: http.ServerResponse): boolean {
  if (knobs.gitFailures <= 0) return false;
  knobs.gitFailures--;
  if (knobs.gitFailureRetryAfter !== undefined) res.setHeader('retry-after', knobs.gitFailureRetryAfter);
  const status = knobs.gitFailureStatus ?? 502;
  fail(res, status, status === 503 ? 'Service Unavailable' : 'Server Error');
  return true;
}

/** A JSON request body; answers GitHub's 400 and returns undefined when it does not parse. */
export function jsonBody(raw: string, res: http.ServerResponse): Record<string, unknown> | undefined {
  try {
    return JSON.parse(raw || '{}') as Record<string, unknown>;
  } catch {
    fail(res, 400, 'Problems parsing JSON');
    return undefined;
  }
}

/** GitHub's timestamp format: ISO 8601 to the second. */
export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
