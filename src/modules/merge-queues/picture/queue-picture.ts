/*
 * A merge queue drawn for a terminal: the chain of batches in landing order, each with its PRs,
 * status, checks, age and expected landing, then the entries waiting with their ETA. Pure: it
 * takes the body of GET /merge-queues/{id}/chain and returns text (no I/O, no Nest).
 */

export interface PictureCheck {
  name: string;
  state: string;
}

export interface PictureBatch {
  id: string;
  role: string;
  parentId?: string;
  prNumbers: number[];
  status: string;
  requiredChecks: PictureCheck[];
  checksUrl?: string;
  headSha?: string;
  operation?: { kind: string; outcome: string };
  createdAt: string;
  ciStartedAt?: string;
  estimatedLandAt?: string;
  lanes?: string[];
  /** Fail-first hints: how many tests its CI should run first. Absent: none (or a server older than hints). */
  failFirst?: number;
}

export interface PictureEntry {
  number: number;
  title?: string;
  status: string;
  priority: number;
  setAside: boolean;
  block?: string;
  enqueuedAt: string;
  estimatedMergeAt?: string;
  lanes?: string[];
}

export interface PictureHold {
  kind: string;
  reason: string;
  since: string;
  prNumbers: number[];
}

export interface QueuePicture {
  id: string;
  repository: string;
  baseRef: string;
  pendingBaseRef?: string;
  baseSha: string;
  status: string;
  hold?: PictureHold;
  revision: string;
  batchDepth: number;
  maxParallel: number;
  /** Absent from servers older than lanes. */
  pathGroups?: { name: string }[];
  ciDurationMs: number;
  now: string;
  batches: PictureBatch[];
  waiting: PictureEntry[];
}

const CHECK_MARK: Record<string, string> = { success: '✓', failure: '✗', pending: '…' };

/** `3m05s`, `2h10m`, `45s`; negative durations (an estimate already past) read as `now`. */
export function formatDuration(ms: number): string {
  if (ms <= 0) return 'now';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

/** Cuts `text` to `width` characters with an ellipsis. */
function cut(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** Left-aligned columns, each as wide as its widest cell. */
function table(rows: string[][], indent: string): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => `${indent}${r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')}`.trimEnd());
}

/** Line breaks and tabs read as a space; every other C0/C1 control, DEL and bidi control is dropped. */
const LINE_BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]/g;
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` made safe to print on a terminal: nothing in it can move the cursor, recolour or retitle it. */
export function terminalSafe(text: string): string {
  return text.replace(LINE_BREAKS, ' ').replace(CONTROLS, '');
}

/** Every string in `value` passed through terminalSafe (the picture is made of what the server sent). */
function safeDeep<T>(value: T): T {
  if (typeof value === 'string') return terminalSafe(value) as T;
  if (Array.isArray(value)) return value.map(safeDeep) as T;
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, safeDeep(v)])) as T;
  return value;
}

/** How the picture marks and names each batch role. */
const ROLE_MARK: Record<string, { mark: string; name: string }> = {
  chain: { mark: '●', name: 'chain' },
  part: { mark: '◇', name: 'probe' },
  screen: { mark: '○', name: 'screen' },
};

/** A PR's lanes in the table: `all` when it is in every one, `-` when in none (it changes nothing). */
function laneCell(lanes: string[] | undefined, names: string[]): string {
  if (lanes === undefined) return '?';
  if (lanes.length === 0) return '-';
  return lanes.length === names.length && names.length > 1 ? 'all' : cut(lanes.join(','), 30);
}

/** How the waiting PRs fall into lanes: one bar per lane, and how many span several. */
function laneSummary(waiting: PictureEntry[], names: string[]): string[] {
  const counts = names.map((name) => waiting.filter((e) => e.lanes?.includes(name)).length);
  const most = Math.max(1, ...counts);
  const width = Math.max(...names.map((n) => n.length));
  const lines = names.map((name, i) => `  lane ${name.padEnd(width)}  ${'█'.repeat(Math.ceil((counts[i] / most) * 20))}${counts[i] ? ' ' : ''}${counts[i]}`);
  const spanning = waiting.filter((e) => (e.lanes?.length ?? 0) > 1).length;
  lines.push(`  ${spanning} of ${waiting.length} span several lanes`);
  return lines;
}

export function drawQueue(picture: QueuePicture): string {
  const q = safeDeep(picture);
  const now = Date.parse(q.now);
  const since = (iso: string) => formatDuration(now - Date.parse(iso));
  const until = (iso: string | undefined) => (iso === undefined ? '' : `~${formatDuration(Date.parse(iso) - now)}`);
  const lines: string[] = [];
  const moving = q.pendingBaseRef ? ` → ${q.pendingBaseRef}` : '';
  lines.push(`merge queue ${q.id}`);
  lines.push(
    `${q.repository} ⇢ ${q.baseRef}${moving}   ${q.status.toUpperCase()}   revision ${q.revision}   batch depth ${q.batchDepth}   runners ${q.maxParallel}   CI ~${formatDuration(q.ciDurationMs)}`,
  );
  if (q.hold) {
    // Why the queue stopped by itself, right under the status: the first thing to read.
    const what = q.hold.kind === 'landRefused' ? 'landing refused by the provider' : 'quarantined';
    const prs = q.hold.prNumbers.length ? ` (${q.hold.prNumbers.map((n) => `#${n}`).join(' ')})` : '';
    lines.push(`⚠ stopped ${since(q.hold.since)} ago, ${what}${prs}: ${cut(q.hold.reason, 200)}`);
    lines.push(`  resume the queue once this is dealt with (POST /merge-queues/${q.id}/resume)`);
  }
  lines.push('');
  const laneNames = (q.pathGroups ?? []).map((g) => g.name);
  lines.push(`● ${q.baseRef} @ ${q.baseSha.slice(0, 12)}`);
  if (q.batches.length === 0) lines.push('  (no batch in flight)');
  const rows: string[][] = [];
  const hinted = q.batches.some((b) => (b.failFirst ?? 0) > 0);
  for (const [i, b] of q.batches.entries()) {
    const last = i === q.batches.length - 1;
    const role = ROLE_MARK[b.role] ?? ROLE_MARK.chain;
    const branch = `${last ? '└─' : '├─'}${role.mark}`;
    const checks = b.requiredChecks.map((c) => `${CHECK_MARK[c.state] ?? '?'} ${c.name}`).join(' ');
    const op = b.operation ? `${b.operation.kind}:${b.operation.outcome}` : '';
    rows.push([
      branch,
      b.id.slice(0, 8),
      role.name,
      b.status,
      cut(b.prNumbers.map((n) => `#${n}`).join(' '), 40),
      ...(laneNames.length ? [laneCell(b.lanes, laneNames)] : []),
      checks || '-',
      op,
      `age ${since(b.createdAt)}`,
      b.ciStartedAt ? `CI ${since(b.ciStartedAt)}` : '',
      b.estimatedLandAt ? `lands ${until(b.estimatedLandAt)}` : '',
      ...(hinted ? [b.failFirst ? `${b.failFirst} to run first` : ''] : []),
    ]);
  }
  if (rows.length) lines.push(...table(rows, ''));
  lines.push('');
  const waiting = q.waiting;
  lines.push(`waiting (${waiting.length})`);
  if (laneNames.length) lines.push(...laneSummary(waiting, laneNames));
  if (waiting.length === 0) lines.push('  (none)');
  else {
    const head = [['PR', 'status', 'priority', 'waiting', 'ETA', ...(laneNames.length ? ['lanes'] : []), 'title']];
    const body = waiting.map((e) => [
      `#${e.number}`,
      e.setAside ? 'set aside' : e.status,
      String(e.priority),
      since(e.enqueuedAt),
      e.estimatedMergeAt ? until(e.estimatedMergeAt) : '-',
      ...(laneNames.length ? [laneCell(e.lanes, laneNames)] : []),
      cut(e.block ? `${e.title ?? ''}${e.title ? ' — ' : ''}${e.block}` : (e.title ?? ''), 120),
    ]);
    lines.push(...table([...head, ...body], '  '));
  }
  return `${lines.join('\n')}\n`;
}
