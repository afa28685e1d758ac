/**
 * Reads a V8 .cpuprofile (from `node --cpu-prof` or `BENCH_PROFILE=1 npm run bench:api`) and
 * prints where the busy time went: self time by package (node_modules/<pkg>, our files, Node's
 * internals, GC), the top functions by self time, and the inclusive time of a few frames that
 * stand for one stage of the request (auth guard, validation pipe, pino-http, Prisma's request).
 * Usage: node --import tsx test/bench/api/cpu-profile-summary.ts <file.cpuprofile>...
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  /** Written by cpu-profile-preload.cjs: the process's user + system CPU while profiling. */
  processCpuMicros?: number;
}

/** Frames whose inclusive time stands for one stage of a request; matched on "function url". */
const STAGES: [string, RegExp][] = [
  ['express/router dispatch (whole sync request path)', /^handle .*node_modules\/router\/index\.js/],
  ['Nest route handler (guards+pipes+interceptors+handler+reply)', /router-execution-context\.js/],
  ['our auth guard (BearerAuthGuard.canActivate)', /^canActivate .*bearer-auth\.guard/],
  ['ValidationPipe.transform (class-transformer + class-validator)', /^transform .*validation\.pipe\.js/],
  ['pino-http (request logging, before issue 22)', /node_modules\/pino-http\//],
  ['our access log and logger (request-logger.ts)', /\/common\/logging\/request-logger\.[jt]s/],
  ['pino (serialise + write)', /node_modules\/pino\//],
  ['Prisma client runtime', /node_modules\/@prisma\/client\//],
  ['our list statement (newestFirstFromSql, pg pool)', /^fetch .*\/common\/pagination\/pagination\.[jt]s/],
  ['Prisma query compiler (wasm)', /^\S* wasm:\/\//],
  ['Prisma adapter-pg', /node_modules\/@prisma\/adapter-pg\//],
  ['pg driver (pg, pg-protocol, pg-types, pg-pool)', /node_modules\/pg(-[a-z]+)?\//],
  ['Express response send/json (incl. JSON.stringify, ETag)', /^(send|json) .*node_modules\/express\/lib\/response\.js/],
];

function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName || 'anonymous'}`;
  if (url.startsWith('wasm://')) return 'wasm (Prisma query compiler)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const internal = /^node:(?:internal\/)?([a-z_]+)/.exec(url);
  if (internal) return `node:${internal[1]}`;
  const ours = /\/(?:dist|src|test)\/(.+?)(?:\.[cm]?[jt]s)?$/.exec(url);
  if (ours) {
    const path = ours[1].split('/');
    return `app: ${path.length > 2 ? path.slice(0, 2).join('/') : path.join('/')}`;
  }
  return url;
}

const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
const perRequest = (us: number, requests?: number) => (requests ? `${(us / requests).toFixed(0).padStart(6)} µs/req` : '');
const pct = (part: number, whole: number) => `${((part / whole) * 100).toFixed(1).padStart(5)}%`;

/** With `requests` (served while profiling), every figure also shows as µs of CPU per request. */
export function summariseProfile(profile: CpuProfile, requests?: number, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfByNode = new Map<number, number>();
  profile.samples.forEach((id, i) => selfByNode.set(id, (selfByNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const byStage = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const [id, time] of selfByNode) {
    const frame = (byId.get(id) as ProfileNode).callFrame;
    if (frame.functionName === '(idle)') {
      idle += time;
      continue;
    }
    busy += time;
    const pkg = packageOf(frame.url, frame.functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + time);
    const fn = `${frame.functionName || '(anonymous)'}  [${pkg}${frame.url && !frame.url.startsWith('wasm') ? `:${frame.url.split('/').pop()}:${frame.lineNumber + 1}` : ''}]`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + time);
    const stages = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = (byId.get(at) as ProfileNode).callFrame;
      const key = `${f.functionName} ${f.url}`;
      for (const [stage, pattern] of STAGES) if (pattern.test(key)) stages.add(stage);
    }
    for (const stage of stages) byStage.set(stage, (byStage.get(stage) ?? 0) + time);
  }

  const served = requests ? `, ${requests} requests, ${(busy / requests).toFixed(0)} µs sampled per request` : '';
  const cpu = profile.processCpuMicros;
  const measured = cpu === undefined ? '' : `; process CPU ${ms(cpu).trim()} ms${requests ? ` (${(cpu / requests).toFixed(0)} µs per request)` : ''}`;
  const lines = [`sampled busy ${ms(busy).trim()} ms, idle ${ms(idle).trim()} ms${served}${measured}`, '', 'self time by package              ms    share'];
  for (const [pkg, time] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, top))
    lines.push(`  ${pkg.padEnd(30)} ${ms(time)}  ${pct(time, busy)}  ${perRequest(time, requests)}`);
  lines.push('', `top ${top} functions by self time`);
  for (const [fn, time] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${ms(time)}  ${pct(time, busy)}  ${fn}`);
  lines.push('', 'inclusive time of request stages (stacks containing the frame)');
  for (const [stage] of STAGES)
    lines.push(`  ${stage.padEnd(62)} ${ms(byStage.get(stage) ?? 0)}  ${pct(byStage.get(stage) ?? 0, busy)}  ${perRequest(byStage.get(stage) ?? 0, requests)}`);
  return lines.join('\n');
}

if (require.main === module) {
  for (const file of process.argv.slice(2)) process.stdout.write(`== ${file}\n${summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile)}\n\n`);
}
