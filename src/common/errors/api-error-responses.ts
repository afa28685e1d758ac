import { applyDecorators } from '@nestjs/common';
import { ApiBadRequestResponse, ApiInternalServerErrorResponse, ApiNotFoundResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorBodyDto } from './error-body';

/** The error responses every authenticated route can give, documented with the error body. */
export const ApiErrorResponses = () =>
  applyDecorators(
    ApiBadRequestResponse({ description: 'Request invalid or malformed', type: ErrorBodyDto }),
    ApiUnauthorizedResponse({ description: 'Missing, invalid, expired or revoked token', type: ErrorBodyDto }),
    ApiNotFoundResponse({ description: 'No such resource in your organization', type: ErrorBodyDto }),
    ApiInternalServerErrorResponse({ description: 'Server error', type: ErrorBodyDto }),
  );
