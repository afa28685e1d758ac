import type { NestExpressApplication } from '@nestjs/platform-express';
import { Redis } from 'ioredis';
import request from 'supertest';
import { RedisService } from '@/common/redis/redis.module';
import { createTestApp } from '../support/app';

describe('Health', () => {
  it('live and ready answer 200 without a token when Postgres and Redis are up', async () => {
    const app = await createTestApp();
    try {
      await request(app.getHttpServer())
        .get('/health/live')
        .expect(200, { data: { status: 'ok' } });
      const ready = await request(app.getHttpServer()).get('/health/ready').expect(200);
      expect(ready.body.data.checks).toMatchObject({ database: { status: 'up' }, redis: { status: 'up' } });
    } finally {
      await app.close();
    }
  });

  it('ready answers 503 with the error body when Redis is down', async () => {
    // A Redis client pointed at a port where nothing listens stands in for a Redis outage.
    const deadRedis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    deadRedis.on('error', () => undefined);
    const app: NestExpressApplication = await createTestApp({}, (builder) =>
      builder.overrideProvider(RedisService).useValue({ client: deadRedis, onModuleDestroy: () => undefined }),
    );
    try {
      const response = await request(app.getHttpServer()).get('/health/ready').expect(503);
      expect(response.body.code).toBe('dpa:Health:SERVICE_UNAVAILABLE');
      expect(response.body.message).toContain('redis');
      expect(response.body.details[0]).toEqual({ title: 'Checks', render: 'object', object: { database: 'up', redis: 'down' } });
      expect(response.body.requestId).toBeDefined();
    } finally {
      await app.close();
      deadRedis.disconnect();
    }
  });
});
