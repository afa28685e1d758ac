/*
 * The messages of the commits a squash or rebase land writes, as GitHub writes them (pure: no I/O).
 * A squash commit is `<PR title> (#N)`, a blank line, then one `Co-authored-by: Name <email>`
 * trailer per other author of the PR's commits (and per co-author their own trailers name),
 * deduplicated by e-mail, without the squash commit's own author.
 */

/** A git identity with the date it signed (ISO 8601, or git's `<unix seconds> <offset>`). */
export interface GitPerson {
  name: string;
  email: string;
  date: string;
}

/** A commit of a PR as a land replays or squashes it. */
export interface PrCommit {
  sha: string;
  parents: string[];
  message: string;
  author: GitPerson;
}

const CO_AUTHOR = /^co-authored-by:\s*(.+?)\s*<([^<>\s]+)>\s*$/gim;

/** The `Co-authored-by:` trailers a commit message names (any case, as GitHub reads them). */
export function coAuthorsNamed(message: string): { name: string; email: string }[] {
  return [...message.matchAll(CO_AUTHOR)].map((m) => ({ name: m[1], email: m[2] }));
}

/** GitHub's trailer line for a co-author. */
export function coAuthorTrailer(person: { name: string; email: string }): string {
  return `Co-authored-by: ${person.name} <${person.email}>`;
}

/**
 * The co-authors of a squash commit: every author of `commits` and every co-author their messages
 * name, in the order first met, once per e-mail (case-insensitive), without `author` (the squash
 * commit's own author).
 */
export function squashCoAuthors(commits: readonly PrCommit[], author: { email: string }): { name: string; email: string }[] {
  const seen = new Set([author.email.toLowerCase()]);
  const out: { name: string; email: string }[] = [];
  for (const c of commits) {
    for (const person of [{ name: c.author.name, email: c.author.email }, ...coAuthorsNamed(c.message)]) {
      const key = person.email.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(person);
    }
  }
  return out;
}

/** The first line of a commit message. */
export function subjectOf(message: string): string {
  return message.split('\n', 1)[0].trim();
}

/**
 * The squash commit's title: the PR's title and ` (#N)`; without a title (an entry enqueued with
 * none), the subject of the PR's first commit, else `Pull request #N`.
 */
export function squashTitle(number: number, title: string | null | undefined, commits: readonly PrCommit[]): string {
  const first = commits.length ? subjectOf(commits[0].message) : '';
  const text = title?.trim() || first || `Pull request #${number}`;
  const suffix = ` (#${number})`;
  return text.endsWith(suffix) ? text : `${text}${suffix}`;
}

/** The whole squash commit message: the title, then the co-author trailers (none: the title alone). */
export function squashMessage(number: number, title: string | null | undefined, commits: readonly PrCommit[], author: { email: string }): string {
  const trailers = squashCoAuthors(commits, author).map(coAuthorTrailer);
  const head = squashTitle(number, title, commits);
  return trailers.length ? `${head}\n\n${trailers.join('\n')}` : head;
}

/**
 * Who a squash commit is authored by: the author of the PR's first commit (GitHub names the PR's
 * opener, whose e-mail its API does not give; the first commit's author is that person on almost
 * every PR), dated as the PR's last commit so that a rebuild gives the same commit.
 */
export function squashAuthor(commits: readonly PrCommit[]): GitPerson | null {
  if (commits.length === 0) return null;
  const { name, email } = commits[0].author;
  return { name, email, date: commits[commits.length - 1].author.date };
}

/**
 * The commits a rebase replays, in replay order: merge commits left out (as `git rebase` leaves
 * them), each commit after its parents among them, otherwise in the order given (GitHub's compare
 * lists commits by date, which a rewritten history can disorder).
 */
export function replayOrder(commits: readonly PrCommit[]): PrCommit[] {
  const kept = commits.filter((c) => c.parents.length <= 1);
  const bySha = new Map(kept.map((c) => [c.sha, c]));
  const out: PrCommit[] = [];
  const placed = new Set<string>();
  const place = (c: PrCommit, path: Set<string>) => {
    if (placed.has(c.sha) || path.has(c.sha)) return;
    path.add(c.sha);
    for (const p of c.parents) {
      const parent = bySha.get(p);
      if (parent) place(parent, path);
    }
    placed.add(c.sha);
    out.push(c);
  };
  for (const c of kept) place(c, new Set());
  return out;
}

/**
 * What the queue says on a PR it landed as new commits (a squash or a rebase), before it closes
 * it: GitHub links each full commit id it names.
 */
export function landedNote(method: 'squash' | 'rebase', baseRef: string, commits: readonly string[]): string {
  const how = method === 'squash' ? 'squashed into one commit' : `rebased as ${commits.length} commit${commits.length === 1 ? '' : 's'}`;
  const list = commits.length === 1 ? ` ${commits[0]}` : `:\n\n${commits.map((c) => `- ${c}`).join('\n')}`;
  return `Landed on \`${baseRef}\` by the merge queue, ${how}${list}.\n\nGitHub does not see these commits as this pull request's merge, so the merge queue closes it.`;
}
