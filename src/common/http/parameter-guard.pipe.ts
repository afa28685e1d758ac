import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { AppError } from '@/common/errors/app-error';
import { RequestErrors } from '@/common/errors/common.errors';
import { invalidFields } from '@/common/errors/invalid-fields';

function badCharacter(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  return undefined;
}

/** The first string in a (possibly nested, from the extended query parser) value that cannot be stored, with its name. */
function findBadString(root: unknown, name: string): { path: string; why: string } | undefined {
  const stack: { value: unknown; path: string }[] = [{ value: root, path: name }];
  while (stack.length > 0) {
    const { value, path } = stack.pop() as { value: unknown; path: string };
    if (typeof value === 'string') {
      const why = badCharacter(value);
      if (why) return { path, why };
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        const childPath = path ? `${path}.${key.replace(/\u0000/g, '\\u0000').slice(0, 60)}` : key.replace(/\u0000/g, '\\u0000').slice(0, 60);
        if (badCharacter(key)) return { path: childPath, why: 'name must not contain the NUL character (U+0000)' };
        stack.push({ value: child, path: childPath });
      }
    }
  }
  return undefined;
}

/**
 * Rejects path and query parameters holding a NUL character before any handler sees them:
 * Postgres refuses U+0000 in text (22021), which would otherwise surface as a 500. Bodies are
 * checked earlier, by the body guard middleware.
 */
@Injectable()
export class ParameterGuardPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'param' && metadata.type !== 'query') return value;
    const problem = findBadString(value, metadata.data ?? '');
    if (!problem) return value;
    const title = metadata.type === 'param' ? 'Invalid path parameters' : 'Invalid query parameters';
    return this.fail(problem, title);
  }

  private fail(problem: { path: string; why: string }, title: string): never {
    throw new AppError(RequestErrors.VALIDATION_FAILED, {
      message: `Invalid request: ${problem.path}: ${problem.why}`,
      details: [invalidFields([`${problem.path}: ${problem.why}`], title)],
      metadata: { fields: [problem.path] },
    });
  }
}
