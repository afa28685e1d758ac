import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { requestIdMiddleware } from '@/common/logging/logging.module';
import { createValidationPipe } from '@/common/http/validation';
import { setupSwagger } from '@/common/swagger/swagger';

export const JSON_BODY_LIMIT = '1mb';

/**
 * Everything between creating the Nest application and listening: shared by main.ts and the e2e
 * tests so both run the same stack. The app must be created with `bodyParser: false`.
 */
export function configureApp(app: NestExpressApplication): void {
  app.useLogger(app.get(Logger));
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.use(requestIdMiddleware);
  app.useBodyParser('json', { limit: JSON_BODY_LIMIT });
  app.useGlobalPipes(createValidationPipe());
  app.enableShutdownHooks();
  setupSwagger(app);
}
