import { type ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError } from '@/common/errors/app-error';
import { RequestErrors } from '@/common/errors/common.errors';
import { capList, invalidFields } from '@/common/errors/invalid-fields';
import { cacheValidationMetadata } from './validation-metadata-cache';

/** Fields the server owns: a request that sets one is told so, not just that it is unknown. */
const READ_ONLY_FIELDS = new Set([
  'id',
  'organizationId',
  'createdAt',
  'updatedAt',
  'createdById',
  'createdByName',
  'token',
  'keySuffix',
  'lastUsedAt',
  'ownerType',
  'revision',
]);

interface FieldProblem {
  path: string;
  messages: string[];
  unknown: boolean;
}

/** Messages without the property name in front. Null gets one message: the others ("must be a string") only confuse. */
function describe(error: ValidationError, constraints: Record<string, string>): string[] {
  if ('whitelistValidation' in constraints) return ['is not an accepted field'];
  if (error.value === null) return ['must not be null'];
  // Keys come from the request: never build a RegExp from one (a 100,000-character or "a(" key would throw).
  return Object.values(constraints).map((m) => (m.startsWith(`${error.property} `) ? m.slice(error.property.length + 1) : m));
}

function flatten(errors: ValidationError[], parent = ''): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (error.constraints) {
      out.push({
        path,
        messages: describe(error, error.constraints),
        unknown: 'whitelistValidation' in error.constraints,
      });
    }
    if (error.children?.length) out.push(...flatten(error.children, path));
  }
  return out;
}

export function validationErrorToAppError(errors: ValidationError[]): AppError {
  const problems = flatten(errors);
  const items = problems.map((p) => `${p.path}: ${p.messages.join('; ')}`);
  const readOnly = problems.filter((p) => p.unknown && READ_ONLY_FIELDS.has(p.path.split('.').pop() as string));
  const fields = problems.map((p) => p.path);
  if (readOnly.length > 0) {
    return new AppError(RequestErrors.READ_ONLY_FIELD, {
      message: `Read-only field${readOnly.length > 1 ? 's' : ''} cannot be set: ${capList(
        readOnly.map((p) => p.path),
        5,
      ).join(', ')}`,
      details: [invalidFields(items)],
      metadata: { fields: capList(fields) },
    });
  }
  return new AppError(RequestErrors.VALIDATION_FAILED, {
    message: `Invalid request: ${capList(items, 3).join('; ')}`,
    details: [invalidFields(items)],
    metadata: { fields: capList(fields) },
  });
}

export function createValidationPipe(): ValidationPipe {
  cacheValidationMetadata();
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    forbidUnknownValues: true,
    exceptionFactory: validationErrorToAppError,
  });
}
