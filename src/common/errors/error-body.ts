import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ErrorActionDto {
  @ApiProperty() label: string;
  @ApiProperty() url: string;
}

export class ErrorDetailSectionDto {
  @ApiProperty() title: string;
  @ApiProperty({ enum: ['list', 'object'] }) render: 'list' | 'object';
  @ApiPropertyOptional({ type: [String] }) items?: string[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) object?: Record<string, unknown>;
}

/** The spec's error body, returned by every failing request. */
export class ErrorBodyDto {
  @ApiProperty({
    description: 'Full error code, `<service>:<Domain>:<CODE>`; the codes are listed in `x-error-catalogue`',
    pattern: '^[a-z]+:[A-Z][A-Za-z]+:[A-Z][A-Z0-9_]*$',
  })
  code: string;
  @ApiProperty() message: string;
  @ApiPropertyOptional({ type: ErrorActionDto }) action?: ErrorActionDto;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional({ type: [ErrorDetailSectionDto] }) details?: ErrorDetailSectionDto[];
  @ApiPropertyOptional({ description: 'Set only when full details are shown; marks internal errors' }) isInternal?: boolean;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) metadata?: Record<string, unknown>;
  @ApiPropertyOptional() requestId?: string;
}

export type ErrorBody = ErrorBodyDto;
export type ErrorDetailSection = ErrorDetailSectionDto;
