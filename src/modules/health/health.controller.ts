import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { Public } from '@/common/auth/auth.decorators';
import { AppError } from '@/common/errors/app-error';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { DEPENDENCY_RETRY_AFTER_SECONDS } from '@/common/errors/dependency-errors';
import { lifecycle } from '@/common/lifecycle/graceful-shutdown';
import { READINESS_CACHE_MS } from '@/common/lifecycle/readiness';
import { PrismaService } from '@/common/prisma/prisma.service';
import { RedisService } from '@/common/redis/redis.module';
import { sharedRead } from '@/common/lifecycle/shared-read';
import { RateLimit, SkipRateLimit } from '@/common/throttling/rate-limit.decorators';
import { HealthErrors } from './health.errors';

const CHECK_TIMEOUT_MS = 2_000;

type Readiness = { ready: true; checks: Record<string, unknown> } | { ready: false; checks: Record<string, { status: string }> };

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  /** One check of Postgres and Redis per READINESS_CACHE_MS in this process, shared by every probe. */
  private readonly readiness = sharedRead(READINESS_CACHE_MS, () => this.check());

  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly prisma: PrismaService,
    private readonly redis: RedisService,
  ) {}

  @Get('live')
  // No I/O at all, and probed often from a few addresses (a balancer's, a node's): no budget.
  @SkipRateLimit()
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
  // Its own per-address budget, instead of the unauthenticated one (RATE_LIMIT_HEALTH_READY).
  @RateLimit('healthReady')
  @ApiOperation({
    summary: 'Readiness: Postgres and Redis answer',
    description: `Public. The answer is shared by every probe of one API process for ${READINESS_CACHE_MS} ms, and probes count against a per-address budget of their own.`,
  })
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
    const readiness = await this.readiness();
    if (readiness.ready) return { data: { status: 'ok', checks: readiness.checks } };
    const down = Object.entries(readiness.checks)
      .filter(([, v]) => v.status !== 'up')
      .map(([k]) => k);
    throw new AppError(HealthErrors.SERVICE_UNAVAILABLE, {
      message: `Not ready: ${down.join(', ')} unavailable.`,
      details: [{ title: 'Checks', render: 'object', object: Object.fromEntries(Object.entries(readiness.checks).map(([k, v]) => [k, v.status])) }],
      headers: { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SECONDS) },
    });
  }

  /** Postgres and Redis, each within CHECK_TIMEOUT_MS (an outcome, never a thrown error: it is shared by several requests). */
  private async check(): Promise<Readiness> {
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
      return { ready: true, checks: result.details };
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      return { ready: false, checks: (error.getResponse() as { details?: Record<string, { status: string }> }).details ?? {} };
    }
  }
}
