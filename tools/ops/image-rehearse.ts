/**
 * `npm run image:rehearse`: the Dockerfile's steps performed outside Docker, for a machine with no
 * container engine. It is a REHEARSAL, NOT AN IMAGE: no base image, no layers, no isolation, the
 * host's git instead of the runtime stage's apt packages, and the current user instead of uid 1000.
 *
 * What it does, read from the Dockerfile itself (not a copy of its steps):
 *   1. the build context: this checkout minus what .dockerignore excludes, copied to a temporary directory;
 *   2. every stage in order, each with its own root under the temporary directory (`/app` of the
 *      `build` stage is `<tmp>/build/app`): WORKDIR, ENV, COPY (from the context, or --from a stage)
 *      and RUN (`sh -c`, in the stage's WORKDIR with its ENV, Node 24 first on PATH); the runtime
 *      stage's `apt-get` RUN is skipped (the host's git is used), and `npm cache clean --force` is
 *      skipped (it would empty this machine's shared npm cache; the image's is a throw-away layer);
 *   3. from the last stage's WORKDIR, with the stage's ENV and nothing of this shell's environment but
 *      PATH: `node dist/migrate.js` on a database of its own, then `node dist/main.js` and
 *      `node dist/worker.js`, each until the HEALTHCHECK command answers 0 (start-up time), then SIGTERM;
 *   4. prints the sizes of the last stage's WORKDIR (node_modules, dist, total): the application's
 *      part of an image, without the base image and the apt layer.
 *
 * Node: the one running this script (put Node 24 first on PATH), or DPA_REHEARSE_NODE; anything
 * but 24 is refused, because the Dockerfile's base image is node:24. Services as `npm test` finds
 * them; DPA_REHEARSE_DATABASE (default dpa_image_rehearsal, recreated), DPA_REHEARSE_REDIS_DB (15)
 * and DPA_REHEARSE_QUEUE_PREFIX (dpa-rehearsal) keep it apart. `--keep` leaves the directory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, posix } from 'node:path';
import { ensureDatabase } from '@tools/workspace/databases';
import { ROOT } from '@tools/workspace/root';
import { provideServices, runOrExplain } from '@tools/workspace/services';
import { excluded, ignoreRules } from './dockerignore';

const say = (line: string) => process.stdout.write(`${line}\n`);
const MB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Copies the build context (this checkout minus .dockerignore) to `into`; returns its file count and size. */
function buildContext(into: string): { files: number; bytes: number } {
  const rules = existsSync(join(ROOT, '.dockerignore')) ? ignoreRules(readFileSync(join(ROOT, '.dockerignore'), 'utf8')) : [];
  const reincludes = rules.filter((r) => r.negate);
  const totals = { files: 0, bytes: 0 };
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(ROOT, relative), { withFileTypes: true })) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      const out = excluded(rules, path);
      if (entry.isDirectory()) {
        // An excluded directory is entered only when a `!` rule could bring something inside it back.
        if (!out || reincludes.length) walk(path);
        continue;
      }
      if (out) continue;
      mkdirSync(join(into, relative), { recursive: true });
      cpSync(join(ROOT, path), join(into, path), { verbatimSymlinks: true });
      totals.files++;
      totals.bytes += lstatSync(join(ROOT, path)).size;
    }
  };
  walk('');
  return totals;
}

// ---- the Dockerfile ----

interface Instruction {
  op: string;
  args: string;
  line: number;
}

function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (!pending && (line.trim() === '' || line.trim().startsWith('#'))) return;
    if (pending && line.trim().startsWith('#')) return;
    if (!pending) start = index + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const whole = (pending + line).trim();
    pending = '';
    const [op] = whole.split(/\s+/);
    out.push({ op: op.toUpperCase(), args: whole.slice(op.length).trim(), line: start });
  });
  return out;
}

interface Stage {
  name: string;
  image: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
  user?: string;
  healthcheck?: string[];
  cmd?: string[];
  entrypoint?: string[];
}

const expand = (value: string, vars: Record<string, string>) => value.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string, b: string) => vars[a ?? b] ?? '');

/** `K=V K2="V 2"` pairs of an ENV or ARG line. */
function pairs(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of args.matchAll(/(\w+)=("([^"]*)"|\S*)/g)) out[match[1]] = match[3] ?? match[2];
  return out;
}

/** A stage's container path on this machine. */
const hostPath = (stage: Stage, path: string) => join(stage.root, posix.isAbsolute(path) ? path : posix.join(stage.workdir, path));

function run(command: string, options: { cwd: string; env: NodeJS.ProcessEnv }): void {
  const result = spawnSync('sh', ['-c', command], { cwd: options.cwd, env: options.env, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`RUN failed (exit ${result.status}): ${command}`);
}

function performDockerfile(dir: string, context: string, nodeBin: string): Stage {
  const vars: Record<string, string> = {};
  const stages: Stage[] = [];
  let stage: Stage | undefined;
  for (const step of instructions(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))) {
    const label = `Dockerfile:${step.line} ${step.op} ${step.args.length > 110 ? `${step.args.slice(0, 110)}…` : step.args}`;
    if (step.op === 'ARG') {
      for (const [key, value] of Object.entries(pairs(step.args))) vars[key] ??= value;
      say(`› ${label}`);
      continue;
    }
    if (step.op === 'FROM') {
      const [image, , name] = step.args.split(/\s+/);
      const stageName = name ?? `stage${stages.length}`;
      stage = { name: stageName, image: expand(image, vars), root: join(dir, stageName), workdir: '/', env: {} };
      mkdirSync(stage.root, { recursive: true });
      stages.push(stage);
      say(`› ${label}   [rehearsal: base image ${stage.image} not pulled; stage root ${stage.root}]`);
      continue;
    }
    if (!stage) throw new Error(`${label}: before any FROM`);
    switch (step.op) {
      case 'WORKDIR':
        stage.workdir = posix.resolve(stage.workdir, expand(step.args, { ...vars, ...stage.env }));
        mkdirSync(hostPath(stage, '.'), { recursive: true });
        say(`› ${label}`);
        break;
      case 'ENV':
        Object.assign(stage.env, pairs(step.args));
        say(`› ${label}`);
        break;
      case 'COPY': {
        const words = step.args.split(/\s+/);
        const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
        const paths = words.filter((w) => !w.startsWith('--'));
        const destination = paths.pop() as string;
        const source = from ? stages.find((s) => s.name === from) : undefined;
        if (from && !source) throw new Error(`${label}: no stage ${from}`);
        const target = hostPath(stage, destination);
        const intoDirectory = destination.endsWith('/') || paths.length > 1;
        for (const path of paths) {
          const origin = source ? hostPath(source, path) : join(context, path);
          if (!existsSync(origin)) throw new Error(`${label}: ${path} is not in the ${source ? `stage ${source.name}` : 'build context (.dockerignore?)'}`);
          const into = intoDirectory && !lstatSync(origin).isDirectory() ? join(target, basename(path)) : target;
          mkdirSync(dirname(into), { recursive: true });
          cpSync(origin, into, { recursive: true, verbatimSymlinks: true });
        }
        say(`› ${label}`);
        break;
      }
      case 'RUN': {
        if (/\bapt-get\b/.test(step.args)) {
          const git = spawnSync('git', ['--version'], { encoding: 'utf8' }).stdout.trim();
          say(
            `› ${label}\n  [rehearsal: skipped, no apt in a rehearsal; the host's ${git || 'git (missing!)'} stands in, and no tini: node gets the signals itself]`,
          );
          break;
        }
        let command = step.args;
        if (command.includes('npm cache clean --force')) {
          command = command.replace('npm cache clean --force', 'true');
          say(
            `  [rehearsal: "npm cache clean --force" skipped: it would empty this machine's shared npm cache; in the image it empties a build-stage cache no later stage copies]`,
          );
        }
        say(`› ${label}`);
        const started = Date.now();
        run(command, { cwd: hostPath(stage, '.'), env: { ...process.env, ...stage.env, PATH: `${dirname(nodeBin)}${delimiter}${process.env.PATH ?? ''}` } });
        say(`  (${((Date.now() - started) / 1000).toFixed(1)} s)`);
        break;
      }
      case 'USER':
        stage.user = step.args;
        say(`› ${label}   [rehearsal: runs as the current user, uid ${process.getuid?.() ?? '?'}]`);
        break;
      case 'HEALTHCHECK': {
        const cmd = /CMD\s+(\[.*\])\s*$/.exec(step.args);
        if (cmd) stage.healthcheck = JSON.parse(cmd[1]) as string[];
        say(`› ${label}`);
        break;
      }
      case 'CMD':
      case 'ENTRYPOINT': {
        const value = JSON.parse(step.args) as string[];
        if (step.op === 'CMD') stage.cmd = value;
        else stage.entrypoint = value;
        say(`› ${label}`);
        break;
      }
      default:
        say(`› ${label}   [rehearsal: nothing to do]`);
    }
  }
  if (!stage) throw new Error('the Dockerfile has no FROM');
  return stage;
}

// ---- running what was built ----

/** What `du` says the directory takes on disk (blocks), beside the sum of its file sizes. */
function diskUsage(path: string): string {
  const kib = Number(spawnSync('du', ['-sk', path], { encoding: 'utf8' }).stdout.split('\t')[0]);
  return Number.isFinite(kib) && kib > 0 ? `${MB(kib * 1024)} on disk (du)` : 'du unavailable';
}

/** The sum of the file sizes under `path` (symlinks not followed): what a layer's tar holds. */
function sizeOf(path: string): number {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Started {
  child: ChildProcess;
  output: string[];
  startupMs: number;
}

/** Starts `node <script>` in the image's WORKDIR and polls the HEALTHCHECK command until it answers 0. */
async function startRole(
  node: string,
  app: string,
  script: string,
  env: NodeJS.ProcessEnv,
  healthcheck: string[],
  healthEnv: NodeJS.ProcessEnv,
): Promise<Started> {
  const started = Date.now();
  const child = spawn(node, [script], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const [command, ...args] = healthcheck;
  const bin = command === 'node' ? node : command;
  while (Date.now() - started < 120_000) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}:\n${output.join('')}`);
    if (spawnSync(bin, args, { cwd: app, env: healthEnv, timeout: 10_000 }).status === 0) return { child, output, startupMs: Date.now() - started };
    await sleep(200);
  }
  child.kill('SIGKILL');
  throw new Error(`${script}: the HEALTHCHECK did not pass within 120 s:\n${output.join('')}`);
}

async function stopRole(role: Started): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  const exited = new Promise<number | null>((resolve) => role.child.once('exit', (code) => resolve(code)));
  role.child.kill('SIGTERM');
  return { code: await exited, ms: Date.now() - started };
}

runOrExplain(async () => {
  const keep = process.argv.includes('--keep');
  const node = process.env.DPA_REHEARSE_NODE ?? process.execPath;
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  if (!version.startsWith('v24.'))
    throw new Error(`${node} is Node ${version || '(not runnable)'}; the image is node:24: put Node 24 first on PATH or set DPA_REHEARSE_NODE`);
  say('================================================================================');
  say("IMAGE REHEARSAL, NOT AN IMAGE: the Dockerfile's steps outside Docker (no engine on this machine).");
  say('No base image, no layers, no isolation, no apt packages, not uid 1000. Sizes below are the');
  say("application's /app only; an image adds node:24-bookworm-slim and the git/tini layer.");
  say(`Node ${version} (${node})`);
  say('================================================================================');
  const dir = mkdtempSync(join(tmpdir(), 'dpa-image-rehearsal-'));
  const children: Started[] = [];
  const services = await provideServices();
  try {
    const context = join(dir, 'context');
    const ctx = buildContext(context);
    say(`› build context: ${ctx.files} files, ${MB(ctx.bytes)} (this checkout minus .dockerignore) in ${context}`);
    const buildStarted = Date.now();
    const runtime = performDockerfile(dir, context, node);
    const buildSeconds = (Date.now() - buildStarted) / 1000;
    const app = hostPath(runtime, '.');

    const database = process.env.DPA_REHEARSE_DATABASE ?? 'dpa_image_rehearsal';
    const databaseUrl = await ensureDatabase(services.postgresServerUrl, database, { fresh: true });
    const redis = new URL(services.redisUrl);
    redis.pathname = `/${Number(process.env.DPA_REHEARSE_REDIS_DB ?? 15)}`;
    const [port, metricsPort, workerPort, nothing] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    // The image's environment: its ENV, the orchestrator's variables, and PATH; nothing of this shell's.
    const env: NodeJS.ProcessEnv = {
      PATH: `${dirname(node)}${delimiter}/usr/local/bin:/usr/bin:/bin`,
      ...runtime.env,
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      WORKER_HEALTH_PORT: String(workerPort),
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.toString(),
      QUEUE_PREFIX: process.env.DPA_REHEARSE_QUEUE_PREFIX ?? 'dpa-rehearsal',
      CREDENTIALS_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      LOG_LEVEL: 'info',
    };
    say(`\n› from ${app}, NODE_ENV=${env.NODE_ENV ?? '(unset)'}, database ${database}, redis ${redis.pathname}`);
    const migrate = spawnSync(node, ['dist/migrate.js'], { cwd: app, env, encoding: 'utf8', timeout: 120_000 });
    if (migrate.status !== 0) throw new Error(`node dist/migrate.js failed (${migrate.status}):\n${migrate.stdout}${migrate.stderr}`);
    say(`› node dist/migrate.js: exit 0 ${migrate.stdout.trim().split('\n').pop() ?? ''}`);

    const healthcheck = runtime.healthcheck ?? ['node', 'dist/healthcheck.js'];
    const api = await startRole(node, app, 'dist/main.js', env, healthcheck, env);
    children.push(api);
    say(`› node dist/main.js: HEALTHCHECK (${healthcheck.join(' ')}) passed ${(api.startupMs / 1000).toFixed(2)} s after start`);
    // The worker's check: nothing listens on PORT, so the healthcheck asks WORKER_HEALTH_PORT, as in a worker container.
    const worker = await startRole(node, app, 'dist/worker.js', env, healthcheck, { ...env, PORT: String(nothing) });
    children.push(worker);
    say(`› node dist/worker.js: HEALTHCHECK passed ${(worker.startupMs / 1000).toFixed(2)} s after start`);
    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
    say(`› API GET /health/ready: ${ready.status} ${(await ready.text()).slice(0, 200)}`);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const workerMetrics = await (await fetch(`http://127.0.0.1:${workerPort}/metrics`)).text();
    say(
      `› GET /metrics: API ${metrics.split('\n').filter((l) => l.startsWith('# TYPE')).length} metric families, worker ${workerMetrics.split('\n').filter((l) => l.startsWith('# TYPE')).length}`,
    );
    for (const [name, role] of [
      ['API', api],
      ['worker', worker],
    ] as const) {
      const stopped = await stopRole(role);
      say(`› ${name} SIGTERM: exit ${stopped.code} after ${(stopped.ms / 1000).toFixed(2)} s`);
      if (stopped.code !== 0) throw new Error(`${name} did not stop cleanly:\n${role.output.join('')}`);
    }
    children.length = 0;

    const nodeModules = sizeOf(join(app, 'node_modules'));
    const dist = sizeOf(join(app, 'dist'));
    const total = sizeOf(app);
    say('\n================================================================================');
    say('IMAGE REHEARSAL RESULT (a rehearsal, not an image)');
    say(`  build steps:            ${buildSeconds.toFixed(0)} s`);
    say('  sizes: the sum of file sizes (what a layer holds), and in brackets what du counts on disk');
    say(`  /app/node_modules:      ${MB(nodeModules)}   (${diskUsage(join(app, 'node_modules'))})`);
    say(`  /app/dist:              ${MB(dist)}   (${diskUsage(join(app, 'dist'))})`);
    say(`  /app total:             ${MB(total)}   (${diskUsage(app)}); a real image adds node:24-bookworm-slim and the git/tini layer`);
    say(`  API start to healthy:   ${(api.startupMs / 1000).toFixed(2)} s`);
    say(`  worker start to healthy: ${(worker.startupMs / 1000).toFixed(2)} s`);
    say('================================================================================');
  } finally {
    for (const child of children) child.child.kill('SIGKILL');
    await services.stop();
    if (keep) say(`› kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
});
