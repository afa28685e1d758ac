/**
 * The middle point of `npm run bench:api`: NestJS on Express with PrismaClient, GET /projects as
 * many teams ship it (findMany + count, no auth, no validation, no request logging, Nest's logger
 * at error, default body parser, Express defaults such as ETag). Same page and same JSON as the
 * full stack; the organization is fixed on the command line because there is no auth.
 * Usage: TSX_TSCONFIG_PATH=tsconfig.check.json node --import tsx plain-server.ts <port> <databaseUrl> <organizationId>
 *
 * It runs through tsx (esbuild), which emits no decorator metadata: injection uses explicit tokens.
 */
import 'reflect-metadata';
import { Controller, Get, Inject, Injectable, Module, OnModuleDestroy, Query } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient, type Project } from '@/generated/prisma/client';

const [port, databaseUrl, organizationId] = process.argv.slice(2);

@Injectable()
class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor() {
    super({ adapter: new PrismaPg({ connectionString: databaseUrl, max: 10 }) });
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}

function toProjectDto(row: Project) {
  return {
    id: row.id,
    givenId: row.givenId,
    name: row.name,
    organizationId: row.organizationId,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(row.description !== null && { description: row.description }),
    ...(row.error !== null && { error: row.error }),
  };
}

@Injectable()
class ProjectsService {
  constructor(@Inject(PrismaService) private readonly prisma: PrismaService) {}

  async list(cursor: string | undefined, limit: number) {
    const where: Prisma.ProjectWhereInput = { organizationId };
    if (cursor) {
      const [, createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [string, string, string];
      where.OR = [{ createdAt: { lt: new Date(createdAt) } }, { createdAt: new Date(createdAt), id: { lt: id } }];
    }
    const [rows, totalCount] = await Promise.all([
      this.prisma.project.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit + 1 }),
      this.prisma.project.count({ where: { organizationId } }),
    ]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const nextCursor = rows.length > limit ? Buffer.from(JSON.stringify(['projects', last.createdAt.toISOString(), last.id])).toString('base64url') : undefined;
    return { data: page.map(toProjectDto), meta: { limit, totalCount, ...(nextCursor && { nextCursor }) } };
  }
}

@Controller('projects')
class ProjectsController {
  constructor(@Inject(ProjectsService) private readonly projects: ProjectsService) {}

  @Get()
  list(@Query('cursor') cursor?: string, @Query('limit') limit?: string) {
    return this.projects.list(cursor, limit ? Number(limit) : 20);
  }
}

@Module({ controllers: [ProjectsController], providers: [PrismaService, ProjectsService] })
class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error'] });
  app.enableShutdownHooks();
  await app.listen(Number(port), '127.0.0.1');
}

void main();
