import type { NextFunction, Request, Response } from 'express';
import { AppError } from '@/common/errors/app-error';
import { RequestErrors } from '@/common/errors/common.errors';
import { invalidFields } from '@/common/errors/invalid-fields';

export interface BodyLimits {
  /** Containers (objects, arrays) nested in one another; a flat `{}` is depth 1. */
  maxDepth: number;
  /** Object keys plus array items, counted over the whole body. */
  maxKeys: number;
}

/** The media types a request body may have; the JSON parser reads exactly these. */
export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

export type BodyProblem =
  { kind: 'depth'; path: string } | { kind: 'keys' } | { kind: 'string'; path: string; why: string } | { kind: 'key'; path: string; why: string };

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*…?$/;
const MAX_PATH_LENGTH = 200;
const MAX_KEY_LENGTH = 40;

function childPath(parent: string, key: string | number): string {
  if (parent.length > MAX_PATH_LENGTH) return parent;
  const short = typeof key === 'string' && key.length > MAX_KEY_LENGTH ? `${key.slice(0, MAX_KEY_LENGTH)}…` : key;
  const part = typeof short === 'number' ? `[${short}]` : IDENTIFIER.test(short) ? `${parent ? '.' : ''}${short}` : `[${JSON.stringify(short)}]`;
  const path = parent + part;
  return path.length > MAX_PATH_LENGTH ? `${path.slice(0, MAX_PATH_LENGTH)}…` : path;
}

// String.prototype.isWellFormed is in Node 20 but not in the ES2022 lib this project compiles against.
type WellFormedString = string & { isWellFormed(): boolean };

/** Why a string cannot be stored: Postgres rejects U+0000 in text and jsonb, and unpaired surrogates in jsonb. */
function badString(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (!(value as WellFormedString).isWellFormed()) return 'must not contain an unpaired UTF-16 surrogate';
  return undefined;
}

/**
 * Walks a parsed JSON value without recursion and returns its first problem: nesting deeper than
 * `maxDepth`, more than `maxKeys` keys and items in all, a string or key that cannot be stored, or
 * a `__proto__` key. Stops at the first problem, so its cost is bounded by `maxKeys`.
 */
export function inspectJson(root: unknown, limits: BodyLimits): BodyProblem | undefined {
  if (typeof root === 'string') {
    const why = badString(root);
    return why ? { kind: 'string', path: '(body)', why } : undefined;
  }
  if (root === null || typeof root !== 'object') return undefined;
  const stack: { value: object; path: string; depth: number }[] = [{ value: root, path: '', depth: 1 }];
  let keys = 0;
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop() as { value: object; path: string; depth: number };
    if (depth > limits.maxDepth) return { kind: 'depth', path: path || '(body)' };
    const isArray = Array.isArray(value);
    const entryKeys = isArray ? null : Object.keys(value);
    const length = isArray ? (value as unknown[]).length : (entryKeys as string[]).length;
    keys += length;
    if (keys > limits.maxKeys) return { kind: 'keys' };
    for (let i = 0; i < length; i++) {
      const key = isArray ? i : (entryKeys as string[])[i];
      const child = (value as Record<string | number, unknown>)[key];
      if (typeof key === 'string') {
        if (key === '__proto__') return { kind: 'key', path: childPath(path, key), why: 'is not an accepted field' };
        const why = badString(key);
        if (why) return { kind: 'key', path: childPath(path, key), why: `key ${why}` };
      }
      if (typeof child === 'string') {
        const why = badString(child);
        if (why) return { kind: 'string', path: childPath(path, key), why };
      } else if (child !== null && typeof child === 'object') {
        stack.push({ value: child, path: childPath(path, key), depth: depth + 1 });
      }
    }
  }
  return undefined;
}

interface ScanFrame {
  isArray: boolean;
  /** Items seen so far in an array; for an object, the last key read. */
  index: number;
  key: string;
  expectValue: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

function scanPath(frames: ScanFrame[]): string {
  let path = '';
  for (const frame of frames.slice(0, -1)) {
    path = frame.isArray ? childPath(path, Math.max(frame.index - 1, 0)) : childPath(path, frame.key);
    if (path.length > MAX_PATH_LENGTH) break;
  }
  return path || '(body)';
}

/**
 * Counts nesting and keys/items in raw JSON bytes, before JSON.parse: parsing a 1 MB body of 90,000
 * keys alone takes 50-100 ms of CPU, so the limits must hold before the parser runs. Stops at the
 * first limit passed; anything it cannot follow is left to JSON.parse to reject.
 */
export function scanJson(bytes: Uint8Array, limits: BodyLimits): BodyProblem | undefined {
  const frames: ScanFrame[] = [];
  let keys = 0;
  let stringStart = -1;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (stringStart >= 0) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) {
        const frame = frames[frames.length - 1];
        if (frame && !frame.isArray && frame.expectValue === false)
          frame.key = Buffer.from(bytes.buffer, bytes.byteOffset + stringStart, Math.min(i - stringStart, MAX_KEY_LENGTH + 1)).toString('utf8');
        stringStart = -1;
      }
      continue;
    }
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    const frame = frames[frames.length - 1];
    if (frame?.isArray && frame.expectValue && c !== CLOSE_ARRAY) {
      frame.expectValue = false;
      frame.index++;
      if (++keys > limits.maxKeys) return { kind: 'keys' };
    }
    switch (c) {
      case QUOTE:
        stringStart = i + 1;
        break;
      case COLON:
        if (frame && !frame.isArray) {
          frame.expectValue = true;
          if (++keys > limits.maxKeys) return { kind: 'keys' };
        }
        break;
      case COMMA:
        if (frame) frame.expectValue = frame.isArray;
        break;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        frames.push({ isArray: c === OPEN_ARRAY, index: 0, key: '', expectValue: c === OPEN_ARRAY });
        if (frames.length > limits.maxDepth) return { kind: 'depth', path: scanPath(frames) };
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        frames.pop();
        break;
      default:
        if (frame && !frame.isArray) frame.expectValue = false;
    }
  }
  return undefined;
}

export function bodyProblemToAppError(problem: BodyProblem, limits: BodyLimits): AppError {
  switch (problem.kind) {
    case 'depth':
      return new AppError(RequestErrors.VALIDATION_FAILED, {
        message: `The request body nests deeper than ${limits.maxDepth} levels (at ${problem.path}).`,
        details: [invalidFields([`${problem.path}: nests deeper than ${limits.maxDepth} levels`])],
        metadata: { fields: [problem.path], maxDepth: limits.maxDepth },
      });
    case 'keys':
      return new AppError(RequestErrors.PAYLOAD_TOO_LARGE, {
        message: `The request body has more than ${limits.maxKeys} keys and array items.`,
        metadata: { maxKeys: limits.maxKeys },
      });
    case 'string':
    case 'key':
      return new AppError(RequestErrors.VALIDATION_FAILED, {
        message: `Invalid request: ${problem.path}: ${problem.why}`,
        details: [invalidFields([`${problem.path}: ${problem.why}`])],
        metadata: { fields: [problem.path] },
      });
  }
}

/** Thrown from the parser's verify hook; body-parser wraps it, `bodyRejectionHandler` unwraps it. */
class BodyRejected extends Error {
  constructor(readonly appError: AppError) {
    super(appError.message);
  }
}

/** body-parser's `verify` option: rejects a body over the limits before JSON.parse runs. */
export function verifyJsonBody(limits: BodyLimits) {
  return (_req: unknown, _res: unknown, bytes: Buffer): void => {
    const problem = scanJson(bytes, limits);
    if (problem) throw new BodyRejected(bodyProblemToAppError(problem, limits));
  };
}

/** Express error middleware placed after the JSON parser: passes on our error, not body-parser's 403 wrapper. */
export function bodyRejectionHandler(error: unknown, _req: Request, _res: Response, next: NextFunction): void {
  next(error instanceof BodyRejected ? error.appError : error);
}

/**
 * Runs right after the JSON parser, before anything transforms or validates the body (class-transformer
 * recurses, and class-validator's cost grows with the number of keys).
 */
export function bodyGuardMiddleware(limits: BodyLimits) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    // Raw bytes (the webhook routes): their service checks them under its own limits before parsing.
    const problem = req.body === undefined || Buffer.isBuffer(req.body) ? undefined : inspectJson(req.body, limits);
    next(problem ? bodyProblemToAppError(problem, limits) : undefined);
  };
}

/** True when the request carries body bytes; an empty body is no body, whatever its Content-Type. */
function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

/** A route that takes a body of other media types than JSON, as raw bytes its service reads (see bootstrap.ts). */
export interface RawBodyRoute {
  /** The request's path (no query) is this route's. */
  path: RegExp;
  method: string;
  mediaTypes: string[];
}

/** The XML media types (a JUnit report's). */
export const XML_MEDIA_TYPES = ['application/xml', 'text/xml'];

/** The raw-body route `req` is for, with a body of one of its media types; undefined for any other request. */
export function rawBodyRouteOf(req: Request, routes: readonly RawBodyRoute[]): RawBodyRoute | undefined {
  if (!hasBody(req)) return undefined;
  const path = req.url.split('?', 1)[0];
  return routes.find((r) => r.method === req.method && r.path.test(path) && req.is(r.mediaTypes) !== false);
}

/**
 * 415 for a request body that is not JSON (nor of the media types of a raw-body route, `rawRoutes`),
 * on any method: otherwise the JSON parser skips it and the route sees no body at all. A request
 * without body bytes passes whatever its Content-Type.
 */
export function mediaTypeMiddleware(rawRoutes: readonly RawBodyRoute[]) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (rawBodyRouteOf(req, rawRoutes)) return next();
    jsonOnlyMiddleware(req, res, next);
  };
}

/**
 * 415 for a request body that is not JSON, on any method: otherwise the JSON parser skips it and
 * the route sees no body at all. A request without body bytes passes whatever its Content-Type.
 */
function jsonOnlyMiddleware(req: Request, _res: Response, next: NextFunction): void {
  if (!hasBody(req) || req.is(JSON_MEDIA_TYPES)) return next();
  const type = req.headers['content-type'];
  next(
    new AppError(RequestErrors.UNSUPPORTED_MEDIA_TYPE, {
      message: type
        ? `The request body must be application/json, not ${type.slice(0, 100)}.`
        : 'The request body must be application/json; the request has no Content-Type.',
      metadata: { contentType: type ? type.slice(0, 100) : null },
    }),
  );
}
