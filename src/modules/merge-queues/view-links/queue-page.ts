/*
 * The merge queue's page (GET /view/merge-queues/{id}/{token}): server-rendered HTML, readable
 * without JavaScript and with none allowed (its one stylesheet is pinned by hash in the CSP). It
 * shows the chain as the CLI draws it (picture/queue-picture.ts), the batches and the waiting PRs
 * as tables, the PR a status link points at (`?pr=N`: its place, state, ETA and why it is blocked
 * or failed) and the last landings. Everything shown is escaped. Pure: no Nest, Prisma or I/O.
 */
import { createHash } from 'node:crypto';
import { escapeHtml as e } from '@/common/http/html';
import { drawQueue, formatDuration, type QueuePicture } from '../picture/queue-picture';

/** An entry as the page shows it: live, or one of the most recent final ones. */
export interface PageEntry {
  number: number;
  title?: string;
  url: string;
  status: string;
  block?: string;
  batchId?: string;
  updatedAt: string;
}

/** A batch as the page shows it: live, or one of the most recent final ones. */
export interface PageBatch {
  id: string;
  status: string;
  prNumbers: number[];
  checksUrl?: string;
  failureReason?: string;
  updatedAt: string;
}

export interface QueuePageInput {
  /** The body of GET /merge-queues/{id}/chain: what the CLI draws. */
  picture: QueuePicture;
  entries: PageEntry[];
  batches: PageBatch[];
  /** The PR the link points at (`?pr=N`). */
  pr?: number;
}

/** How many landed batches "Last landings" lists. */
export const LANDINGS_SHOWN = 10;

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;color:#1b1b1b;background:#fff;margin:0}
main{max-width:72rem;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.6rem;margin:.5rem 0}h2{font-size:1.25rem;margin:2rem 0 .5rem}
a{color:#0b57d0}a:focus,a:hover{color:#06357a}
pre{background:#f4f4f4;color:#1b1b1b;padding:1rem;overflow-x:auto;font:14px/1.4 ui-monospace,monospace;border:1px solid #6b6b6b}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{border:1px solid #6b6b6b;padding:.3rem .5rem;text-align:left;vertical-align:top}
thead th{background:#e8e8e8}
.this-pr,mark{background:#fff0a8;color:#1b1b1b}
.this-pr th,.this-pr td{font-weight:700}
.warning{border:2px solid #9a3412;color:#7c2d12;padding:.5rem 1rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}
.muted{color:#4a4a4a}
`.trim();

/** The page's Content-Security-Policy: nothing but its own stylesheet (no script, image, frame, form or base). */
export const QUEUE_PAGE_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/** Headers of the page and of its 404: HTML, not sniffed, not cached, not framed, no referrer. */
export const QUEUE_PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': QUEUE_PAGE_CSP,
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'X-Robots-Tag': 'noindex, nofollow',
} as const;

function document(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex, nofollow"><meta name="referrer" content="no-referrer">
<title>${e(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/**
 * What a link that is not good shows: changed, expired, revoked or for another queue, each the same
 * page, which names nothing of the queue.
 */
export function renderNotFoundPage(): string {
  return document(
    'Page not found',
    '<h1>Page not found</h1>\n<p>This link does not open anything. It may have expired or been revoked; the status on the pull request links to a current one.</p>',
  );
}

/** Where PR `pr` is in the queue, in words, with what goes with it. */
export interface PrPlace {
  number: number;
  state: string;
  place: string;
  eta?: string;
  why?: string;
  ciUrl?: string;
  url?: string;
  title?: string;
}

function at(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

/** The PR's place: in a batch of the chain, waiting, or how it left the queue (the newest of its entries). */
export function prPlace(input: QueuePageInput, pr: number): PrPlace | undefined {
  const { picture } = input;
  const now = Date.parse(picture.now);
  const eta = (iso: string | undefined) => (iso === undefined ? undefined : `${at(iso)} (in about ${formatDuration(Date.parse(iso) - now)})`);
  const entry = input.entries.filter((x) => x.number === pr).sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt))[0];
  const about = { number: pr, ...(entry && { url: entry.url }), ...(entry?.title !== undefined && { title: entry.title }) };
  const inChain = picture.batches.findIndex((b) => b.prNumbers.includes(pr));
  if (inChain >= 0) {
    const batch = picture.batches[inChain];
    const others = batch.prNumbers.filter((n) => n !== pr);
    return {
      ...about,
      state: entry?.status ?? 'testing',
      place: `In batch ${batch.id.slice(0, 8)}, number ${inChain + 1} of ${picture.batches.length} in the chain${others.length ? `, tested with ${others.map((n) => `#${n}`).join(', ')}` : ''} (batch ${batch.status})`,
      ...(eta(batch.estimatedLandAt) && { eta: eta(batch.estimatedLandAt) }),
      ...(batch.checksUrl && { ciUrl: batch.checksUrl }),
    };
  }
  const waiting = picture.waiting.findIndex((w) => w.number === pr);
  if (waiting >= 0) {
    const w = picture.waiting[waiting];
    const status = w.setAside ? 'set aside' : w.status;
    return {
      ...about,
      ...(w.title !== undefined && { title: w.title }),
      state: status,
      place: `Waiting for a batch: number ${waiting + 1} of ${picture.waiting.length} waiting, behind ${picture.batches.length} batch${picture.batches.length === 1 ? '' : 'es'} in the chain`,
      ...(eta(w.estimatedMergeAt) && { eta: eta(w.estimatedMergeAt) }),
      ...(w.block && { why: w.block }),
    };
  }
  if (!entry) return undefined;
  const batch = entry.batchId ? input.batches.find((b) => b.id === entry.batchId) : undefined;
  const failedBatch = entry.status === 'failed' ? input.batches.find((b) => b.status === 'failed' && b.prNumbers.includes(pr)) : undefined;
  const places: Record<string, string> = {
    merged: `Merged at ${at(entry.updatedAt)}`,
    failed: `Left the queue at ${at(entry.updatedAt)}: its batch failed`,
    removed: `Removed from the queue at ${at(entry.updatedAt)}`,
  };
  const why = entry.status === 'failed' ? (failedBatch?.failureReason ?? batch?.failureReason ?? entry.block) : entry.block;
  const ciUrl = (failedBatch ?? batch)?.checksUrl;
  return { ...about, state: entry.status, place: places[entry.status] ?? `In the queue (${entry.status})`, ...(why && { why }), ...(ciUrl && { ciUrl }) };
}

function link(url: string, text: string): string {
  // Only http(s) links are followed (a stored URL is the PR's or the CI run's); never a referrer.
  return /^https?:\/\//i.test(url) ? `<a href="${e(url)}" rel="noreferrer noopener">${e(text)}</a>` : e(text);
}

function prSection(place: PrPlace | undefined, pr: number): string {
  if (!place)
    return `<section aria-labelledby="this-pr">\n<h2 id="this-pr">Pull request #${pr}</h2>\n<p>#${pr} is not in this queue, and did not leave it recently.</p>\n</section>`;
  const rows: [string, string][] = [
    ['Pull request', place.url ? link(place.url, `#${pr}${place.title ? ` ${place.title}` : ''}`) : e(`#${pr}${place.title ? ` ${place.title}` : ''}`)],
    ['State', e(place.state)],
    ['Place', e(place.place)],
    ['Expected to merge', place.eta ? e(place.eta) : '<span class="muted">no estimate</span>'],
  ];
  if (place.why) rows.push([place.state === 'failed' ? 'Why it failed' : place.state === 'blocked' ? 'Why it is blocked' : 'Why', e(place.why)]);
  if (place.ciUrl) rows.push(['CI run', link(place.ciUrl, place.ciUrl)]);
  return `<section aria-labelledby="this-pr" class="this-pr-section">
<h2 id="this-pr">Pull request #${pr}</h2>
<dl>
${rows.map(([k, v]) => `<dt>${e(k)}</dt><dd>${v}</dd>`).join('\n')}
</dl>
</section>`;
}

/** The CLI's drawing, each line holding the PR marked. */
function drawing(picture: QueuePicture, pr: number | undefined): string {
  const text = drawQueue(picture).trimEnd();
  const marker = pr === undefined ? undefined : new RegExp(`#${pr}(?![0-9])`);
  return text
    .split('\n')
    .map((line) => (marker?.test(line) ? `<mark>${e(line)}</mark>` : e(line)))
    .join('\n');
}

function row(cells: string[], highlighted: boolean): string {
  const [first, ...rest] = cells;
  return `<tr${highlighted ? ' class="this-pr" aria-current="true"' : ''}><th scope="row">${first}</th>${rest.map((c) => `<td>${c}</td>`).join('')}</tr>`;
}

function table(caption: string, head: string[], rows: string[], empty: string): string {
  if (rows.length === 0) return `<p>${e(empty)}</p>`;
  return `<table>
<caption>${e(caption)}</caption>
<thead><tr>${head.map((h) => `<th scope="col">${e(h)}</th>`).join('')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

const prs = (numbers: number[], pr: number | undefined) => numbers.map((n) => (n === pr ? `<strong>#${n} (this PR)</strong>` : `#${n}`)).join(' ');

export function renderQueuePage(input: QueuePageInput): string {
  const { picture: q, pr } = input;
  const now = Date.parse(q.now);
  const title = `Merge queue ${q.repository} → ${q.baseRef}`;
  const parts: string[] = [`<h1>${e(title)}</h1>`];
  parts.push(
    `<p>Status <strong>${e(q.status.toUpperCase())}</strong>${q.pendingBaseRef ? `, moving to ${e(q.pendingBaseRef)}` : ''}. Base ${e(q.baseRef)} at <code>${e(q.baseSha.slice(0, 12))}</code>. CI takes about ${e(formatDuration(q.ciDurationMs))}. As of ${e(at(q.now))}.</p>`,
  );
  if (q.hold)
    parts.push(
      `<p class="warning" role="status">The queue stopped by itself ${e(formatDuration(now - Date.parse(q.hold.since)))} ago: ${e(q.hold.reason)}</p>`,
    );
  if (pr !== undefined) parts.push(prSection(prPlace(input, pr), pr));

  const batchRows = q.batches.map((b, i) =>
    row(
      [
        String(i + 1),
        `<code>${e(b.id.slice(0, 8))}</code>`,
        e(b.role),
        e(b.status),
        prs(b.prNumbers, pr),
        b.requiredChecks.length ? b.requiredChecks.map((c) => e(`${c.name}: ${c.state}`)).join(', ') : '-',
        b.checksUrl ? link(b.checksUrl, 'CI run') : '-',
        b.estimatedLandAt ? e(at(b.estimatedLandAt)) : '-',
      ],
      pr !== undefined && b.prNumbers.includes(pr),
    ),
  );
  parts.push(`<section aria-labelledby="chain">
<h2 id="chain">The chain</h2>
<figure>
<pre aria-label="The chain as the command line draws it">${drawing(q, pr)}</pre>
<figcaption>As <code>queue show</code> draws it: the base, then each batch in the order it lands, then the PRs waiting.</figcaption>
</figure>
${table('Batches in flight, in the order they land', ['Order', 'Batch', 'Role', 'Status', 'Pull requests', 'Required checks', 'CI', 'Expected to land'], batchRows, 'No batch is in flight.')}
</section>`);

  const waitingRows = q.waiting.map((w, i) =>
    row(
      [
        String(i + 1),
        w.number === pr ? `<strong>#${w.number} (this PR)</strong>` : `#${w.number}`,
        e(w.title ?? ''),
        e(w.setAside ? 'set aside' : w.status),
        String(w.priority),
        e(formatDuration(now - Date.parse(w.enqueuedAt))),
        w.estimatedMergeAt ? e(at(w.estimatedMergeAt)) : '-',
        e(w.block ?? ''),
      ],
      w.number === pr,
    ),
  );
  parts.push(`<section aria-labelledby="waiting">
<h2 id="waiting">Waiting</h2>
${table('Pull requests waiting for a batch, in planning order', ['Order', 'Pull request', 'Title', 'Status', 'Priority', 'Waiting for', 'Expected to merge', 'Why blocked'], waitingRows, 'No pull request is waiting.')}
</section>`);

  const landed = input.batches
    .filter((b) => b.status === 'landed')
    .sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt))
    .slice(0, LANDINGS_SHOWN);
  const titles = new Map(input.entries.filter((x) => x.title !== undefined).map((x) => [x.number, x.title as string]));
  const landedRows = landed.map((b) =>
    row(
      [
        e(at(b.updatedAt)),
        prs(b.prNumbers, pr),
        e(
          b.prNumbers
            .map((n) => titles.get(n) ?? '')
            .filter(Boolean)
            .join('; '),
        ),
        `<code>${e(b.id.slice(0, 8))}</code>`,
        b.checksUrl ? link(b.checksUrl, 'CI run') : '-',
      ],
      pr !== undefined && b.prNumbers.includes(pr),
    ),
  );
  parts.push(`<section aria-labelledby="landings">
<h2 id="landings">Last landings</h2>
${table('The most recent batches landed, newest first', ['Landed', 'Pull requests', 'Titles', 'Batch', 'CI'], landedRows, 'Nothing landed recently.')}
</section>`);
  parts.push(
    '<p class="muted">This page is a read-only view opened by a link that expires and can be revoked. Do not forward the link: anyone holding it sees this queue.</p>',
  );
  return document(title, parts.join('\n'));
}
