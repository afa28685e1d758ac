import { ArgumentsHost, Catch } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AllExceptionsFilter } from '@/common/errors/all-exceptions.filter';
import { AppError } from '@/common/errors/app-error';
import { renderError } from '@/common/errors/error-renderer';
import { ERROR_PAGE_HEADERS, renderOAuthErrorPage } from './oauth-error-page';

const PAGE_STATUSES = new Set([400, 410]);

/**
 * The browser routes of the OAuth flow (GET /scm/authorize, GET /scm/callback) are opened by a
 * person's browser, not an API client: a catalogue error is rendered as a plain HTML page when the
 * request's Accept header prefers text/html and the status is 400 or 410; everything else is the one filter's error body.
 */
@Catch()
export class OAuthErrorPageFilter extends AllExceptionsFilter {
  override catch(exception: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<Request & { id?: string }>();
    const res = host.switchToHttp().getResponse<Response>();
    if (!(exception instanceof AppError) || res.headersSent || req.accepts(['application/json', 'text/html']) !== 'text/html')
      return super.catch(exception, host);
    const rendered = renderError(exception, { requestId: req.id === undefined ? undefined : String(req.id) });
    // The statuses the OpenAPI document declares a page for (a bad or used link); a rate limit or an outage stays JSON.
    if (!PAGE_STATUSES.has(rendered.status)) return super.catch(exception, host);
    res.status(rendered.status).set(ERROR_PAGE_HEADERS);
    if (rendered.headers) res.set(rendered.headers);
    res.send(renderOAuthErrorPage({ code: rendered.body.code, message: rendered.body.message, requestId: rendered.body.requestId }));
  }
}
