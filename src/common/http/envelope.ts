import { applyDecorators, Type as ClassType } from '@nestjs/common';
import { ApiAcceptedResponse, ApiExtraModels, ApiOkResponse, ApiCreatedResponse, ApiProperty, getSchemaPath } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { Type } from 'class-transformer';
import { IsDefined, IsObject, ValidateNested } from 'class-validator';
import { PageMetaDto } from '@/common/pagination/pagination';

const requestEnvelopes = new Map<ClassType<unknown>, ClassType<unknown>>();

/**
 * The `{data: {...}}` request envelope around a DTO: `class CreateXRequest extends
 * RequestEnvelope(CreateXDto) {}` validates the payload and documents it.
 */
export function RequestEnvelope<T>(payload: ClassType<T>): ClassType<{ data: T }> {
  const existing = requestEnvelopes.get(payload);
  if (existing) return existing as ClassType<{ data: T }>;
  class Envelope {
    @ApiProperty({ type: payload })
    @IsDefined()
    @IsObject()
    @ValidateNested()
    @Type(() => payload)
    data: T;
  }
  requestEnvelopes.set(payload, Envelope);
  return Envelope;
}

function dataSchema(model: ClassType<unknown>, list: boolean): SchemaObject {
  const data = list ? { type: 'array', items: { $ref: getSchemaPath(model) } } : { $ref: getSchemaPath(model) };
  return (
    list
      ? { type: 'object', required: ['data', 'meta'], properties: { data, meta: { $ref: getSchemaPath(PageMetaDto) } } }
      : { type: 'object', required: ['data'], properties: { data } }
  ) as SchemaObject;
}

/** Documents a `{data}` success response. */
export const ApiDataResponse = (model: ClassType<unknown>, options: { status?: 200 | 201 | 202; description?: string } = {}) =>
  applyDecorators(
    ApiExtraModels(model),
    options.status === 202
      ? ApiAcceptedResponse({ description: options.description ?? 'Accepted', schema: dataSchema(model, false) })
      : (options.status === 201 ? ApiCreatedResponse : ApiOkResponse)({
          description: options.description ?? (options.status === 201 ? 'Created' : 'OK'),
          schema: dataSchema(model, false),
        }),
  );

/** Documents a `{data, meta}` list response. */
export const ApiPageResponse = (model: ClassType<unknown>) =>
  applyDecorators(ApiExtraModels(model, PageMetaDto), ApiOkResponse({ description: 'One page of the list', schema: dataSchema(model, true) }));
