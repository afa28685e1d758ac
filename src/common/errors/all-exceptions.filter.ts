import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { renderError } from './error-renderer';
import type { Principal } from '@/common/auth/principal';

/** The one place where a failure becomes an HTTP response. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request & { id?: string; principal?: Principal }>();
    const response = http.getResponse<Response>();
    const rendered = renderError(exception, { requestId: request.id, superadmin: request.principal?.isSuperadmin === true });
    if (rendered.internal) {
      try {
        this.logger.error({ err: exception, requestId: request.id, code: rendered.body.code }, 'request failed');
      } catch {
        // Logging a failure must never change the answer to it (the access line still records the status).
      }
    }
    if (response.headersSent) return;
    if (rendered.headers) response.set(rendered.headers);
    response.status(rendered.status).json(rendered.body);
  }
}
