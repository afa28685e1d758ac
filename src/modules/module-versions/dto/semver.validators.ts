import { ValidateBy, type ValidationOptions } from 'class-validator';
import { parseVersion } from '../semver-key';

/** A version string this API stores: the spec's pattern, semver 2.0.0 (no leading zeros), bounded numbers and length. */
export function IsSemanticVersion(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isSemanticVersion',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && parseVersion(value).ok,
        defaultMessage: (args) => {
          const value = args?.value;
          if (typeof value !== 'string') return 'must be a semantic version string';
          const parsed = parseVersion(value);
          return parsed.ok ? 'is valid' : parsed.reason;
        },
      },
    },
    options,
  );
}

/** A JSON object of at most `maxBytes` (UTF-8 of its JSON text) and `maxDepth` levels of nesting. */
export function IsBoundedJsonObject(maxBytes: number, maxDepth: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isBoundedJsonObject',
      validator: {
        validate: (value: unknown) => boundedJsonProblem(value, maxBytes, maxDepth) === undefined,
        defaultMessage: (args) => boundedJsonProblem(args?.value, maxBytes, maxDepth) ?? 'is valid',
      },
    },
    options,
  );
}

function depthOf(value: unknown, limit: number, level = 1): number {
  if (value === null || typeof value !== 'object') return level - 1;
  if (level > limit) return level;
  let deepest = level;
  for (const child of Object.values(value as object)) deepest = Math.max(deepest, depthOf(child, limit, level + 1));
  return deepest;
}

export function boundedJsonProblem(value: unknown, maxBytes: number, maxDepth: number): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'must be a JSON object';
  if (depthOf(value, maxDepth) > maxDepth) return `must nest at most ${maxDepth} levels of objects and arrays`;
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > maxBytes) return `must be at most ${maxBytes} bytes as JSON`;
  return undefined;
}
