import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { Public } from '@/common/auth/auth.decorators';
import { AppError } from '@/common/errors/app-error';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { DEPENDENCY_RETRY_AFTER_SECONDS } from '@/common/errors/dependency-errors';
import { lifecycle } from '@/common/lifecycle/graceful-shutdown';
import { PrismaService } from '@/common/prisma/prisma.service';
import { RedisService } from '@/common/redis/redis.module';
import { SkipRateLimit } from '@/common/throttling/rate-limit.decorators';
import { HealthErrors } from './health.errors';

const CHECK_TIMEOUT_MS = 2_000;

@ApiTags('health')
@Public()
// Probes come often from a few addresses (a balancer's, a node's): they must not spend or hit those addresses' budgets.
@SkipRateLimit()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process serves requests' })
  @ApiOkResponse({
    description: 'Alive',
    schema: {
      type: 'object',
      required: ['data'],
      properties: { data: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } } },
    },
  })
  live() {
    return { data: { status: 'ok' } };
  }

  @Get('ready')
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Readiness: Postgres and Redis answer' })
  @ApiOkResponse({
    description: 'Ready: every dependency answers',
    schema: {
      type: 'object',
      required: ['data'],
      properties: {
        data: {
          type: 'object',
          required: ['status', 'checks'],
          properties: {
            status: { type: 'string', example: 'ok' },
            checks: {
              type: 'object',
              description: 'Per dependency, as @nestjs/terminus reports it',
              additionalProperties: {
                type: 'object',
                required: ['status'],
                properties: { status: { type: 'string', example: 'up' } },
                additionalProperties: true,
              },
            },
          },
        },
      },
    },
  })
  @ApiErrors(HealthErrors.SERVICE_UNAVAILABLE)
  async ready() {
    // Draining after SIGTERM: the balancer stops sending new requests while the ones in flight finish.
    if (lifecycle.shuttingDown)
      throw new AppError(HealthErrors.SERVICE_UNAVAILABLE, {
        message: 'Not ready: the process is shutting down.',
        headers: { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SECONDS) },
      });
    try {
      const result = await this.health.check([
        () =>
          this.indicators
            .check('database')
            .attempt(() => this.prisma.$queryRaw`SELECT 1`.then(() => undefined))
            .withTimeout(CHECK_TIMEOUT_MS),
        () =>
          this.indicators
            .check('redis')
            .attempt(() => this.redis.client.ping().then(() => undefined))
            .withTimeout(CHECK_TIMEOUT_MS),
      ]);
      return { data: { status: result.status, checks: result.details } };
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      const details = (error.getResponse() as { details?: Record<string, { status: string }> }).details ?? {};
      const down = Object.entries(details)
        .filter(([, v]) => v.status !== 'up')
        .map(([k]) => k);
      throw new AppError(HealthErrors.SERVICE_UNAVAILABLE, {
        message: `Not ready: ${down.join(', ')} unavailable.`,
        details: [{ title: 'Checks', render: 'object', object: Object.fromEntries(Object.entries(details).map(([k, v]) => [k, v.status])) }],
        headers: { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SECONDS) },
      });
    }
  }
}
