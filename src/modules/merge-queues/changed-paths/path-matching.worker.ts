import { parentPort } from 'node:worker_threads';
import { type CompiledPathGroups, compilePathGroups, lanesFor, type PathGroup } from '../planner';

/*
 * The worker thread of PathMatching (path-matching.ts): compiles a queue's path groups (kept for
 * the next request of the same groups) and matches one PR's paths, stopping at the request's
 * deadline. Loaded from the compiled .js, or through tsx from the .ts under test.
 */

export interface MatchRequest {
  id: number;
  key: string;
  groups: PathGroup[];
  paths: string[];
  /** Epoch milliseconds past which matching stops (the PR is then in every lane). */
  deadlineAt: number;
}

export interface MatchAnswer {
  id: number;
  /** The lanes and reason, or null: the deadline passed. */
  verdict: ReturnType<typeof lanesFor>;
}

/** The most compiled groups a thread keeps (each holds its own DFA cache). */
const KEPT = 16;
const compiled = new Map<string, CompiledPathGroups>();

function compiledFor(key: string, groups: PathGroup[]): CompiledPathGroups {
  let m = compiled.get(key);
  if (m) compiled.delete(key);
  else m = compilePathGroups(groups);
  compiled.set(key, m);
  if (compiled.size > KEPT) compiled.delete(compiled.keys().next().value!);
  return m;
}

parentPort?.on('message', (request: MatchRequest) => {
  const stop = () => Date.now() >= request.deadlineAt;
  const verdict = stop() ? null : lanesFor(compiledFor(request.key, request.groups), request.paths, stop);
  parentPort!.postMessage({ id: request.id, verdict } satisfies MatchAnswer);
});
