import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AuthModule } from '@/common/auth/auth.module';
import { ConfigError, loadConfig } from '@/common/config/app-config';
import { ConfigModule } from '@/common/config/config.module';
import { migrate } from '@/common/prisma/migration-runner';
import { PrismaModule } from '@/common/prisma/prisma.module';
import { RedisModule } from '@/common/redis/redis.module';
import { OrganizationsModule } from '@/modules/organizations/organizations.module';
import { drawEntry, type EntryPicture } from '@/modules/merge-queues/picture/entry-picture';
import { drawQueue, type QueuePicture } from '@/modules/merge-queues/picture/queue-picture';
import { OrganizationsService } from '@/modules/organizations/organizations.service';

@Module({ imports: [ConfigModule, PrismaModule, RedisModule, AuthModule, OrganizationsModule] })
class CliModule {}

const USAGE = `Usage: node dist/cli.js <command> [options]

Commands:
  bootstrap --org <name> [--json] [--superadmin] [--key-name <name>]
      Create the organization (if missing) with an OWNER member and issue that member an API key.
      Prints {"organizationId","memberId","apiKeyId","token"} with --json.
  superadmin grant <memberId>
  superadmin revoke <memberId>
      Make a member a superadmin (reads bug reports of every organization, sees internal error
      details) or take it back. Only this command sets the flag; it is recorded in the audit trail.
  migrate
      Apply pending database migrations (same as npm run db:migrate).
  queue show <mergeQueueId> [--url <api url>] [--json]
      Draw a merge queue: the chain of batches in landing order (PRs, status, checks, age, expected
      landing) and the entries waiting with their ETA. Talks to the API: the token is read from
      DPA_TOKEN (never an argument), the URL from --url or DPA_API_URL (default http://127.0.0.1:3000).
  queue entry <mergeQueueId> <entryId> [--url <api url>] [--json]
      One entry of a merge queue: the PR, its title and where it came from (the request or GitHub),
      how it came and who asked, its lanes, its batch and its newest events. Token and URL as above.
`;

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}

async function run(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return command ? 0 : 64;
  }
  if (command === 'queue') return queueCommand(args);
  const config = loadConfig();
  if (command === 'migrate') {
    const result = await migrate(config.databaseUrl, (line) => process.stdout.write(`${line}\n`));
    process.stdout.write(`${result.applied.length} applied, ${result.alreadyApplied} already applied\n`);
    return 0;
  }
  if (command === 'bootstrap') {
    const org = option(args, '--org');
    if (!org || org.startsWith('--')) {
      process.stderr.write('bootstrap needs --org <name>\n');
      return 64;
    }
    const app = await NestFactory.createApplicationContext(CliModule, { logger: false });
    try {
      const result = await app.get(OrganizationsService).bootstrap(org, { superadmin: args.includes('--superadmin'), keyName: option(args, '--key-name') });
      if (args.includes('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
      else
        process.stdout.write(
          `organization ${result.organizationId}\nmember       ${result.memberId}\napi key      ${result.apiKeyId}\ntoken        ${result.token}\n`,
        );
    } finally {
      await app.close();
    }
    return 0;
  }
  if (command === 'superadmin') {
    const [action, memberId] = args;
    if ((action !== 'grant' && action !== 'revoke') || !memberId) {
      process.stderr.write('usage: superadmin grant|revoke <memberId>\n');
      return 64;
    }
    const app = await NestFactory.createApplicationContext(CliModule, { logger: false });
    try {
      const changed = await app.get(OrganizationsService).setSuperadmin(memberId, action === 'grant');
      if (!changed) {
        process.stderr.write(`no member ${memberId}\n`);
        return 1;
      }
      process.stdout.write(`member ${memberId} ${action === 'grant' ? 'is now' : 'is no longer'} a superadmin\n`);
    } finally {
      await app.close();
    }
    return 0;
  }
  process.stderr.write(`unknown command: ${command}\n\n${USAGE}`);
  return 64;
}

/** `queue show <id>`: asks the API for the queue's chain and draws it; `queue entry <id> <entryId>`: one entry's details. */
async function queueCommand(args: string[]): Promise<number> {
  const [action, id, entryId] = args;
  const usage = 'usage: queue show <mergeQueueId> | queue entry <mergeQueueId> <entryId> [--url <api url>] [--json]\n';
  if ((action !== 'show' && action !== 'entry') || !id || id.startsWith('--') || (action === 'entry' && (!entryId || entryId.startsWith('--')))) {
    process.stderr.write(usage);
    return 64;
  }
  const token = process.env.DPA_TOKEN;
  if (!token) {
    process.stderr.write(`queue ${action} needs an API key in DPA_TOKEN\n`);
    return 64;
  }
  const base = (option(args, '--url') ?? process.env.DPA_API_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
  const path =
    action === 'show'
      ? `/merge-queues/${encodeURIComponent(id)}/chain`
      : `/merge-queues/${encodeURIComponent(id)}/entries/${encodeURIComponent(entryId)}/details`;
  const response = await fetch(`${base}${path}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    signal: AbortSignal.timeout(30_000),
  });
  // Success is {data}; an error is the error body itself ({code, message, requestId, ...}).
  const body = (await response.json().catch(() => null)) as { data?: QueuePicture | EntryPicture; code?: string; message?: string; requestId?: string } | null;
  if (!response.ok || !body?.data) {
    process.stderr.write(
      `${response.status} ${body?.code ?? ''} ${body?.message ?? response.statusText}${body?.requestId ? ` (request ${body.requestId})` : ''}\n`,
    );
    return 1;
  }
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify(body.data, null, 2)}\n`);
  else process.stdout.write(action === 'show' ? drawQueue(body.data as QueuePicture) : drawEntry(body.data as EntryPicture));
  return 0;
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof ConfigError ? 78 : 1);
  },
);
