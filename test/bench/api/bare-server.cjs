// The yardstick of `npm run bench:api`: node:http + pg answering the same page of the same query
// as GET /projects (keyset page of 20, newest first, plus the total count), with no framework, no
// auth and no validation. Usage: node bare-server.cjs <port> <databaseUrl> <organizationId>
'use strict';
const http = require('node:http');
const { Pool } = require('pg');

const [port, databaseUrl, organizationId] = process.argv.slice(2);
const pool = new Pool({ connectionString: databaseUrl, max: 10 });

const PAGE = `SELECT "id", "organizationId", "givenId", "name", "description", "status", "error", "createdAt", "updatedAt"
  FROM "Project" WHERE "organizationId" = $1 ORDER BY "createdAt" DESC, "id" DESC LIMIT 21`;
const COUNT = 'SELECT count(*)::int AS n FROM "Project" WHERE "organizationId" = $1';

http
  .createServer(async (req, res) => {
    try {
      const [page, count] = await Promise.all([pool.query(PAGE, [organizationId]), pool.query(COUNT, [organizationId])]);
      const rows = page.rows.slice(0, 20);
      const last = rows[rows.length - 1];
      const meta = { limit: 20, totalCount: count.rows[0].n };
      if (page.rows.length > 20) meta.nextCursor = Buffer.from(JSON.stringify(['projects', last.createdAt.toISOString(), last.id])).toString('base64url');
      const data = rows.map((r) => {
        const item = {
          id: r.id,
          givenId: r.givenId,
          name: r.name,
          organizationId: r.organizationId,
          status: r.status,
          createdAt: r.createdAt.toISOString(),
          updatedAt: r.updatedAt.toISOString(),
        };
        if (r.description !== null) item.description = r.description;
        if (r.error !== null) item.error = r.error;
        return item;
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data, meta }));
    } catch (error) {
      res.writeHead(500);
      res.end(String(error));
    }
  })
  .listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
