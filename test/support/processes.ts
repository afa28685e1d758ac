import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { eventually } from './eventually';

export { sleep } from './eventually';

export const ROOT = join(__dirname, '..', '..');

/** A built process (dist/main.js or dist/worker.js) started for a test, with its output kept. */
export class BuiltProcess {
  output = '';
  private readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Starts `script` and waits for `ready` in its output. */
  // 90 s: a start-up normally takes a few seconds, but a machine running several suites side by side has taken 25 s.
  static async start(script: 'dist/main.js' | 'dist/worker.js', env: NodeJS.ProcessEnv, ready: string, timeoutMs = 90_000): Promise<BuiltProcess> {
    const proc = new BuiltProcess(
      spawn(process.execPath, [script], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    await eventually(`${script} to print ${ready}`, async () => proc.output.includes(ready) || !proc.running, { timeoutMs, everyMs: 50 }).catch(
      () => undefined,
    );
    if (!proc.output.includes(ready)) {
      await proc.stop('SIGKILL');
      throw new Error(`${script} did not start:\n${proc.output}`);
    }
    return proc;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves when the process has exited, with how. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.exit;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.running) this.child.kill(signal);
    await this.exit;
  }
}

/** The built API on a free port; `base` is its URL. */
export async function startApi(env: NodeJS.ProcessEnv = {}): Promise<BuiltProcess & { base: string }> {
  const port = await freePort();
  const proc = await BuiltProcess.start('dist/main.js', { LOG_LEVEL: 'info', ...env, PORT: String(port) }, 'api listening');
  return Object.assign(proc, { base: `http://127.0.0.1:${port}` });
}

/** The built worker. */
export function startWorker(env: NodeJS.ProcessEnv = {}): Promise<BuiltProcess> {
  return BuiltProcess.start('dist/worker.js', { LOG_LEVEL: 'info', ...env }, 'worker started');
}

/**
 * Runs the built CLI without blocking this process: a spawnSync would stop the event loop for as
 * long as the CLI runs, so a pooled keep-alive socket the server closed meanwhile is handed to the
 * next fetch before its close is seen ("other side closed").
 */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 60_000,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['dist/cli.js', ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: timeoutMs }, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ status, stdout, stderr });
    });
  });
}

/** A new organization with an owner key, made by `cli bootstrap`. */
export async function bootstrapTenant(orgPrefix: string): Promise<{ token: string; memberId: string; organizationId: string; apiKeyId: string }> {
  const result = await runCli(['bootstrap', '--org', `${orgPrefix}-${Math.random().toString(36).slice(2, 10)}`, '--json']);
  if (result.status !== 0) throw new Error(`cli bootstrap failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout);
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The shared polling helper under the name the merge-queue suites know it by. */
export async function until<T>(what: string, check: () => Promise<T | undefined | false | null>, timeoutMs = 60_000, everyMs = 100): Promise<T> {
  return eventually(what, check, { timeoutMs, everyMs });
}
