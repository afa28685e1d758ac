import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { Public } from '@/common/auth/auth.decorators';
import { AppError } from '@/common/errors/app-error';
import { ErrorBodyDto } from '@/common/errors/error-body';
import { PrismaService } from '@/common/prisma/prisma.service';
import { RedisService } from '@/common/redis/redis.module';
import { HealthErrors } from './health.errors';

const CHECK_TIMEOUT_MS = 2_000;

@ApiTags('health')
@Public()
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
  @ApiOkResponse({ schema: { type: 'object', properties: { data: { type: 'object', properties: { status: { type: 'string', example: 'ok' } } } } } })
  live() {
    return { data: { status: 'ok' } };
  }

  @Get('ready')
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Readiness: Postgres and Redis answer' })
  @ApiOkResponse({ schema: { type: 'object', properties: { data: { type: 'object', additionalProperties: true } } } })
  @ApiServiceUnavailableResponse({ type: ErrorBodyDto })
  async ready() {
    try {
      const result = await this.health.check([
        () => this.indicators.check('database').attempt(() => this.prisma.$queryRaw`SELECT 1`.then(() => undefined)).withTimeout(CHECK_TIMEOUT_MS),
        () => this.indicators.check('redis').attempt(() => this.redis.client.ping().then(() => undefined)).withTimeout(CHECK_TIMEOUT_MS),
      ]);
      return { data: { status: result.status, checks: result.details } };
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      const details = (error.getResponse() as { details?: Record<string, { status: string }> }).details ?? {};
      const down = Object.entries(details).filter(([, v]) => v.status !== 'up').map(([k]) => k);
      throw new AppError(HealthErrors.SERVICE_UNAVAILABLE, {
        message: `Not ready: ${down.join(', ')} unavailable.`,
        details: [{ title: 'Checks', render: 'object', object: Object.fromEntries(Object.entries(details).map(([k, v]) => [k, v.status])) }],
      });
    }
  }
}
