import { ValidationError, ValidationPipe } from '@nestjs/common';
import { AppError } from '@/common/errors/app-error';

/** Fields the server owns: a request that sets one is told so, not just that it is unknown. */
const READ_ONLY_FIELDS = new Set(['id', 'organizationId', 'createdAt', 'updatedAt', 'createdById', 'createdByName', 'token', 'keySuffix', 'lastUsedAt', 'ownerType', 'revision']);

interface FieldProblem {
  path: string;
  messages: string[];
  unknown: boolean;
}

function flatten(errors: ValidationError[], parent = ''): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (error.constraints) {
      out.push({
        path,
        messages: Object.values(error.constraints).map((m) => m.replace(/^property (\S+) should not exist$/, 'is not an accepted field').replace(new RegExp(`^${error.property} `), '')),
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
    return new AppError('READ_ONLY_FIELD', {
      message: `Read-only field${readOnly.length > 1 ? 's' : ''} cannot be set: ${readOnly.map((p) => p.path).join(', ')}`,
      details: [{ title: 'Invalid fields', render: 'list', items }],
      metadata: { fields },
    });
  }
  return new AppError('VALIDATION_FAILED', {
    message: `Invalid request: ${items.slice(0, 3).join('; ')}${items.length > 3 ? '; …' : ''}`,
    details: [{ title: 'Invalid fields', render: 'list', items }],
    metadata: { fields },
  });
}

export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    forbidUnknownValues: true,
    exceptionFactory: validationErrorToAppError,
  });
}
