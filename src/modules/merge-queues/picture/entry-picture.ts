/*
 * One merge-queue entry drawn for a terminal (`cli queue entry`): the PR, its title and where that
 * came from, how it came and who asked, its lanes, its batch, and its newest events. Pure: it takes
 * the body of GET /merge-queues/{id}/entries/{entryId}/details and returns text.
 */
import { terminalSafe } from './queue-picture';

export interface EntryPicture {
  entry: { id: string; number: number; headSha: string; url: string; status: string; position: number; priority: number; setAside: boolean; block?: string };
  origin: { via: string; actor: string; actorKind: string } | null;
  title: string | null;
  titleSource: string | null;
  lanes?: string[];
  pathsStatus?: string;
  lanesReason?: string;
  pathsCount?: number;
  batch: { id: string; status: string; prNumbers: number[]; requiredChecks: { name: string; state: string }[] } | null;
  enqueuedAt: string;
  updatedAt: string;
  events: { type: string; createdAt: string; detail: Record<string, unknown>; transitions: { subject: string; id: string; from: string; to: string }[] }[];
}

const VIA: Record<string, string> = { api: 'the API', label: 'the enqueue label', comment: 'a /queue comment' };

/** What one event did to the entry, in a few words. */
function eventLine(event: EntryPicture['events'][number], entryId: string): string {
  const steps = event.transitions.filter((t) => t.subject === 'entry' && t.id === entryId).map((t) => `${t.from} → ${t.to}`);
  const d = event.detail;
  const fact =
    event.type === 'titleChanged' && typeof d.title === 'string'
      ? ` "${d.title}"`
      : event.type === 'entryLanes' && Array.isArray(d.lanes)
        ? ` ${d.lanes.join(', ') || '-'}`
        : typeof d.reason === 'string'
          ? ` (${d.reason})`
          : typeof d.priority === 'number'
            ? ` ${d.priority}`
            : '';
  return `${event.type}${fact}${steps.length ? `  ${steps.join(', ')}` : ''}`;
}

export function drawEntry(details: EntryPicture): string {
  const safe = (v: string) => terminalSafe(v);
  const e = details.entry;
  const lines: string[] = [];
  lines.push(`#${e.number}  ${details.title === null ? '(no title)' : safe(details.title)}`);
  if (details.titleSource) lines.push(`  title from   ${details.titleSource === 'github' ? 'GitHub' : 'the request'}`);
  lines.push(`  status       ${e.status}${e.setAside ? ' (set aside)' : ''}   priority ${e.priority}   head ${e.headSha.slice(0, 12)}`);
  if (e.block) lines.push(`  why          ${safe(e.block)}`);
  lines.push(
    `  came by      ${details.origin ? `${VIA[details.origin.via] ?? safe(details.origin.via)}, asked by ${safe(details.origin.actor)}` : 'not recorded'}`,
  );
  if (details.lanes) {
    const where = details.pathsStatus ? ` (${details.pathsStatus}${details.pathsCount !== undefined ? `, ${details.pathsCount} paths` : ''})` : '';
    lines.push(`  lanes        ${details.lanes.map(safe).join(', ') || '-'}${where}`);
    if (details.lanesReason) lines.push(`               ${safe(details.lanesReason)}`);
  }
  if (details.batch) {
    const checks = details.batch.requiredChecks.map((c) => `${c.state === 'success' ? '✓' : c.state === 'failure' ? '✗' : '…'} ${safe(c.name)}`).join(' ');
    lines.push(`  batch        ${details.batch.id.slice(0, 8)} ${details.batch.status}  ${details.batch.prNumbers.map((n) => `#${n}`).join(' ')}  ${checks}`);
  }
  lines.push(`  pull request ${safe(e.url)}`);
  if (details.events.length) {
    lines.push('', 'events (newest first)');
    for (const event of details.events) lines.push(`  ${event.createdAt.replace('T', ' ').slice(0, 19)}  ${safe(eventLine(event, e.id))}`);
  }
  return `${lines.join('\n')}\n`;
}
