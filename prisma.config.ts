import { defineConfig } from 'prisma/config';

// The runtime client gets its URL from the app config (src/common/config); this file only serves
// the Prisma CLI. A placeholder keeps `prisma generate` working without a database.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: {
    path: 'prisma/migrations',
    seed: 'tsx prisma/seed.ts',
  },
  datasource: {
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/delivery_platform',
  },
});
