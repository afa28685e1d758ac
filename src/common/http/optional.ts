import { IsDefined, ValidateIf, type ValidationOptions } from 'class-validator';

/**
 * An optional field that is not nullable: absent (undefined) skips validation, `null` is rejected
 * with "must not be null". class-validator's `@IsOptional()` skips null too, which lets `null`
 * through to the database for columns that cannot hold it.
 */
export function IsOptionalNonNull(options?: ValidationOptions): PropertyDecorator {
  return (target: object, property: string | symbol) => {
    ValidateIf((_object, value) => value !== undefined, options)(target, property as string);
    IsDefined({ ...options, message: '$property must not be null' })(target, property as string);
  };
}
