import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { runInRequestContext } from '@/common/http/request-context';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Takes the caller's X-Request-Id when it is sane, else makes one; echoes it on the response. */
export function requestIdMiddleware(req: Request & { id?: string }, res: Response, next: NextFunction): void {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  req.id = id;
  res.setHeader('X-Request-Id', id);
  runInRequestContext(id, next);
}
