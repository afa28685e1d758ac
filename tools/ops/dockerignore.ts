/**
 * .dockerignore as Docker reads it, as far as this project's file uses it: patterns are
 * filepath.Match globs from the context root (`*` stays within one path segment), `**` crosses
 * segments, `!` re-includes, the last matching rule wins, and a pattern that matches a directory
 * excludes everything under it. Plain functions, no I/O.
 */

import { posix } from 'node:path';

export interface IgnoreRule {
  negate: boolean;
  pattern: RegExp;
}

/** Docker's rules, as far as this project's .dockerignore uses them: filepath.Match globs from the context root, `**`, `!` re-includes, the last match wins. */
export function ignoreRules(text: string): IgnoreRule[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const negate = line.startsWith('!');
      const glob = posix
        .normalize((negate ? line.slice(1) : line).trim())
        .replace(/^\/+/, '')
        .replace(/\/+$/, '');
      let source = '';
      for (let i = 0; i < glob.length; i++) {
        const c = glob[i];
        if (c === '*' && glob[i + 1] === '*') {
          source += '.*';
          i++;
        } else if (c === '*') source += '[^/]*';
        else if (c === '?') source += '[^/]';
        else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      }
      return { negate, pattern: new RegExp(`^${source}$`) };
    });
}

/** Excluded when the path or one of its parent directories matches, the last matching rule deciding. */
export function excluded(rules: IgnoreRule[], path: string): boolean {
  const parts = path.split('/');
  let out = false;
  for (const rule of rules) {
    for (let n = 1; n <= parts.length; n++) {
      if (rule.pattern.test(parts.slice(0, n).join('/'))) {
        out = !rule.negate;
        break;
      }
    }
  }
  return out;
}
