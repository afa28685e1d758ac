import { BadRequestException, NotFoundException } from '@nestjs/common';
import { AppError } from './app-error';
import { RequestErrors, ServerErrors } from './common.errors';
import { defineErrors, errorCatalogue } from './error-catalogue';
import { capList, invalidFields, MAX_LISTED_PROBLEMS } from './invalid-fields';
import { renderError } from './error-renderer';

const TestErrors = defineErrors('Widget', { NOT_FOUND: [404, 'The widget does not exist.'] });

describe(renderError.name, () => {
  it('renders an AppError with its catalogue code and status', () => {
    const { status, body } = renderError(new AppError(TestErrors.NOT_FOUND, { metadata: { id: 'x' } }), { requestId: 'r1' });
    expect(status).toBe(404);
    expect(body).toEqual({ code: 'dpa:Widget:NOT_FOUND', message: 'The widget does not exist.', metadata: { id: 'x' }, requestId: 'r1' });
  });

  it('carries the headers an AppError asks for', () => {
    expect(renderError(new AppError(RequestErrors.RATE_LIMITED, { headers: { 'Retry-After': '3' } }), {}).headers).toEqual({ 'Retry-After': '3' });
  });

  it('maps body-parser failures wrapped by the express adapter', () => {
    const parse = Object.assign(new SyntaxError('Unexpected token'), { type: 'entity.parse.failed', status: 400 });
    expect(renderError(new BadRequestException('x', { cause: parse }), {}).body.code).toBe('dpa:Request:MALFORMED_JSON');
  });

  it('keeps Nest route-not-found messages', () => {
    expect(renderError(new NotFoundException('Cannot GET /x'), {}).body).toEqual({ code: 'dpa:Request:ROUTE_NOT_FOUND', message: 'Cannot GET /x' });
  });

  it('strips internals from unknown errors unless the caller is a superadmin', () => {
    const error = new TypeError('secret detail');
    expect(renderError(error, {}).body).toEqual({ code: 'dpa:Server:INTERNAL', message: ServerErrors.INTERNAL.message });
    expect(renderError(error, { superadmin: true }).body).toEqual({
      code: 'dpa:Server:INTERNAL',
      message: ServerErrors.INTERNAL.message,
      isInternal: true,
      metadata: { name: 'TypeError', message: 'secret detail' },
    });
  });
});

describe(defineErrors.name, () => {
  it('registers codes of the shape <service>:<Domain>:<CODE>, each once', () => {
    const codes = errorCatalogue().map((e) => e.code);
    expect(codes).toEqual(expect.arrayContaining(['dpa:Widget:NOT_FOUND', 'dpa:Request:VALIDATION_FAILED', 'dpa:Server:INTERNAL']));
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^dpa:[A-Z][A-Za-z]+:[A-Z_]+$/);
  });

  it('accepts the same declaration twice but refuses a conflicting one', () => {
    expect(defineErrors('Widget', { NOT_FOUND: [404, 'The widget does not exist.'] }).NOT_FOUND).toBe(TestErrors.NOT_FOUND);
    expect(() => defineErrors('Widget', { NOT_FOUND: [410, 'Gone.'] })).toThrow(/declared twice/);
    expect(() => defineErrors('widget', { X: [400, 'x'] })).toThrow(/shape/);
    expect(() => defineErrors('Widget', { OK: [200, 'x'] })).toThrow(/not an error status/);
  });
});

describe(invalidFields.name, () => {
  it('lists up to the cap and counts the rest', () => {
    const items = Array.from({ length: 90_000 }, (_, i) => `data.k${i}: is not an accepted field`);
    const section = invalidFields(items);
    expect(section.items).toHaveLength(MAX_LISTED_PROBLEMS + 1);
    expect(section.items?.at(-1)).toBe(`… and ${90_000 - MAX_LISTED_PROBLEMS} more`);
    expect(JSON.stringify(section).length).toBeLessThan(4_000);
  });

  it('cuts very long items', () => {
    expect(capList([`data.${'k'.repeat(100_000)}: is not an accepted field`])[0].length).toBeLessThan(400);
  });
});
