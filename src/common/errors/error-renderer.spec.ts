import { BadRequestException, NotFoundException } from '@nestjs/common';
import { AppError } from './app-error';
import { ErrorCatalogue } from './error-catalogue';
import { renderError } from './error-renderer';

describe(renderError.name, () => {
  it('renders an AppError with its catalogue code and status', () => {
    const { status, body } = renderError(new AppError('PROJECT_NOT_FOUND', { metadata: { id: 'x' } }), { requestId: 'r1' });
    expect(status).toBe(404);
    expect(body).toEqual({ code: 'dpa:Project:NOT_FOUND', message: 'The project does not exist.', metadata: { id: 'x' }, requestId: 'r1' });
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
    expect(renderError(error, {}).body).toEqual({ code: 'dpa:Server:INTERNAL', message: ErrorCatalogue.INTERNAL.message });
    expect(renderError(error, { superadmin: true }).body).toEqual({ code: 'dpa:Server:INTERNAL', message: ErrorCatalogue.INTERNAL.message, isInternal: true, metadata: { name: 'TypeError', message: 'secret detail' } });
  });

  it('has unique, well-shaped codes in the catalogue', () => {
    const codes = Object.values(ErrorCatalogue).map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^dpa:[A-Z][A-Za-z]+:[A-Z_]+$/);
  });
});
