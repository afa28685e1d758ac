/**
 * What the intake reads of a GitHub delivery before and besides what it means (github-events.ts):
 * where it is routed (installation id, then repository id; never `full_name`), the timestamp it
 * carries (a delivery older than GitHub's redelivery window is a replay), and the part of it that
 * is stored for the worker. Pure: no I/O.
 */

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const numericId = (v: unknown): string | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? String(v) : typeof v === 'string' && /^[1-9][0-9]{0,19}$/.test(v) ? v : undefined;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * How long after a delivery GitHub lets it be redelivered (docs.github.com, "Redelivering webhooks":
 * the past 3 days on github.com, 7 on GitHub Enterprise Server). A delivery whose own timestamp is
 * older than this plus REDELIVERY_MARGIN_MS is refused: only a replay can be that old.
 */
export const REDELIVERY_WINDOW_MS = { GITHUB: 3 * DAY_MS, GITHUB_ENTERPRISE: 7 * DAY_MS } as const;
/** Between the event's timestamp and GitHub's first delivery of it (and clocks that disagree). */
export const REDELIVERY_MARGIN_MS = HOUR_MS;

export interface DeliveryRouting {
  /** `installation.id`: a GitHub App delivery. */
  installationId?: string;
  /** `repository.id`, GitHub's numeric id of the repository (a code source's `foreignId`). */
  repositoryId?: string;
  /** `repository.full_name` as the delivery names it now (a rename or transfer changes it, not the id). */
  repositoryName?: string;
  repositoryUrl?: string;
}

export function routingOf(payload: unknown): DeliveryRouting {
  const p = obj(payload);
  const repository = obj(p?.repository);
  const url = str(repository?.html_url);
  return {
    installationId: numericId(obj(p?.installation)?.id),
    repositoryId: numericId(repository?.id),
    repositoryName: str(repository?.full_name),
    ...(url && /^https?:\/\//.test(url) && url.length <= 2048 && { repositoryUrl: url }),
  };
}

/** A timestamp GitHub writes as ISO 8601 or as epoch seconds (push's `repository.pushed_at`); ms, or undefined. */
function timeOf(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v < 1e12 ? v * 1000 : v;
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v)) {
    const ms = Date.parse(v);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

/**
 * The time the event happened, read from the payload of each event the queue acts on:
 *
 * | event          | field                                          |
 * |----------------|------------------------------------------------|
 * | pull_request   | `pull_request.updated_at`                      |
 * | check_run      | `check_run.completed_at` (else `started_at`)   |
 * | check_suite    | `check_suite.updated_at`                       |
 * | status         | `updated_at`                                   |
 * | push           | `repository.pushed_at` (epoch seconds)         |
 * | issue_comment  | `comment.updated_at` (else `created_at`)       |
 * | installation   | `installation.updated_at` / `suspended_at`, the later |
 * | branch_protection_rule | `rule.updated_at`                      |
 * | repository_ruleset | `repository_ruleset.updated_at`            |
 *
 * Undefined for other events (ignored, nothing to replay) and when the field is absent: GitHub always
 * sends it, so a delivery without it was never one of GitHub's and cannot be a captured one replayed.
 */
export function eventTimeOf(event: string, payload: unknown): number | undefined {
  const p = obj(payload);
  switch (event) {
    case 'pull_request':
      return timeOf(obj(p?.pull_request)?.updated_at);
    case 'check_run': {
      const run = obj(p?.check_run);
      return timeOf(run?.completed_at) ?? timeOf(run?.started_at);
    }
    case 'check_suite':
      return timeOf(obj(p?.check_suite)?.updated_at);
    case 'status':
      return timeOf(p?.updated_at);
    case 'issue_comment': {
      const comment = obj(p?.comment);
      return timeOf(comment?.updated_at) ?? timeOf(comment?.created_at);
    }
    case 'push':
      return timeOf(obj(p?.repository)?.pushed_at);
    case 'installation': {
      const installation = obj(p?.installation);
      const times = [timeOf(installation?.updated_at), timeOf(installation?.suspended_at)].filter((t): t is number => t !== undefined);
      return times.length > 0 ? Math.max(...times) : undefined;
    }
    case 'branch_protection_rule':
      return timeOf(obj(p?.rule)?.updated_at);
    case 'repository_ruleset':
      return timeOf(obj(p?.repository_ruleset)?.updated_at);
    default:
      return undefined;
  }
}

/** Why a delivery is too old to be anything but a replay, or undefined when it may be applied. */
export function staleness(
  event: string,
  payload: unknown,
  provider: keyof typeof REDELIVERY_WINDOW_MS,
  now: number,
): { at: string; maxAgeMs: number } | undefined {
  const at = eventTimeOf(event, payload);
  const maxAgeMs = REDELIVERY_WINDOW_MS[provider] + REDELIVERY_MARGIN_MS;
  return at !== undefined && now - at > maxAgeMs ? { at: new Date(at).toISOString(), maxAgeMs } : undefined;
}

/** Keys dropped wherever they appear: large and never read by the queue. */
const DROPPED = new Set(['commits', 'body', 'output', '_links', 'pull_requests', 'branches', 'commit', 'files', 'patch', 'text', 'summary', 'annotations']);
/** A repository object anywhere is kept as these fields only (GitHub sends about 100). */
const REPOSITORY_KEYS = ['id', 'full_name', 'name', 'html_url', 'fork', 'private', 'default_branch', 'pushed_at', 'owner'];
const ACCOUNT_KEYS = ['id', 'login', 'type'];
const MAX_DEPTH = 6;
const MAX_ITEMS = 50;
const MAX_STRING = 2_048;

function prune(value: unknown, depth: number, key?: string): unknown {
  if (typeof value === 'string') return value.length > MAX_STRING ? undefined : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return undefined;
  if (Array.isArray(value))
    return value
      .slice(0, MAX_ITEMS)
      .map((item) => prune(item, depth + 1))
      .filter((item) => item !== undefined);
  const source = value as Json;
  const keep =
    key === 'repository' || key === 'repo' ? REPOSITORY_KEYS : ['owner', 'user', 'sender', 'account', 'pusher'].includes(key ?? '') ? ACCOUNT_KEYS : undefined;
  const out: Json = {};
  for (const k of keep ?? Object.keys(source)) {
    if (!(k in source) || DROPPED.has(k)) continue;
    const child = prune(source[k], depth + 1, k);
    if (child !== undefined) out[k] = child;
  }
  return out;
}

/**
 * The part of a delivery kept until the worker applies it: the payload without what the queue never
 * reads (a push's `commits`, PR and issue bodies, a comment's body past its first line, check output but a check run's title and annotations' count, every repository object but its id,
 * name, URL and owner, accounts but their id and login), strings over 2 KB, lists past 50 items and
 * nesting past 6 levels. A 2,000-commit push of 20 MB keeps about a kilobyte; `head_commit` keeps its
 * id and timestamp. Dropped once applied (the row keeps the delivery id and the outcome).
 */
export function storedPayload(event: string, payload: unknown): Json {
  const p = obj(payload);
  if (!p) return {};
  const kept = prune(p, 0) as Json;
  const head = obj(p.head_commit);
  if (event === 'push') {
    if (head) kept.head_commit = { id: head.id, timestamp: head.timestamp };
    if (Array.isArray(p.commits)) kept.commit_count = p.commits.length;
  }
  // A check run keeps of its output what says where its failing tests may be read: its title and annotations' count.
  const output = obj(obj(p.check_run)?.output);
  const keptRun = obj(kept.check_run);
  if (event === 'check_run' && output && keptRun) {
    keptRun.output = {
      ...(typeof output.title === 'string' && { title: output.title.slice(0, 200) }),
      ...(typeof output.annotations_count === 'number' && { annotations_count: output.annotations_count }),
    };
  }
  // A comment keeps its first line only (a command is that line), within 100 characters.
  const comment = obj(p.comment);
  const keptComment = obj(kept.comment);
  if (event === 'issue_comment' && comment && keptComment && typeof comment.body === 'string') {
    const first = comment.body.split(/\r?\n/, 1)[0];
    if (first.length <= 100) keptComment.body = first;
  }
  return kept;
}
