import type { Response } from 'express';

/**
 * A handler's body that is JSON text already (a list whose rows were rendered from the database's text): Nest sends a string as it
 * is, and this gives it the Content-Type `res.json` sets (`application/json; charset=utf-8`), so the
 * response is byte for byte the one an object would have made. The handler takes
 * `@Res({ passthrough: true }) res` and returns `jsonText(res, text)`.
 */
export function jsonText(res: Response, text: string): string {
  res.type('application/json');
  return text;
}
