import type { PrismaService } from '@/common/prisma/prisma.service';
import type { RedisService } from '@/common/redis/redis.module';

/** A readiness answer is reused this long by every probe of one process (the API's GET /health/ready and the worker's). */
export const READINESS_CACHE_MS = 1_000;

export interface Readiness {
  ready: boolean;
  checks: Record<'database' | 'redis', { status: 'up' | 'down' }>;
}

function within(promise: Promise<unknown>, ms: number): Promise<'up' | 'down'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('down'), ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve('up');
      },
      () => {
        clearTimeout(timer);
        resolve('down');
      },
    );
  });
}

/** Postgres and Redis answer a trivial request within `timeoutMs` each (the same checks as the API's GET /health/ready). */
export async function checkReadiness(prisma: PrismaService, redis: RedisService, timeoutMs = 2_000): Promise<Readiness> {
  const [database, cache] = await Promise.all([within(prisma.$queryRaw`SELECT 1`, timeoutMs), within(redis.client.ping(), timeoutMs)]);
  return { ready: database === 'up' && cache === 'up', checks: { database: { status: database }, redis: { status: cache } } };
}
