import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiTooManyRequestsResponse } from '@nestjs/swagger';
import { ErrorBodyDto } from '@/common/errors/error-body';
import { NAMED_RATE_LIMITS, type NamedRateLimit } from './rate-limits';

export const RATE_LIMIT_NAMES = 'rateLimit:names';
export const SKIP_RATE_LIMIT = 'rateLimit:skip';

const RATE_LIMIT_HEADERS = {
  'Retry-After': { description: 'Seconds until the caller may try again', schema: { type: 'integer' } },
  'RateLimit-Limit': { description: 'Requests allowed in the window', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer' } },
};

/** Adds a tighter named budget (per API key, see NAMED_RATE_LIMITS) to the route, on top of the base one. */
export const RateLimit = (...names: NamedRateLimit[]) =>
  applyDecorators(
    SetMetadata(RATE_LIMIT_NAMES, names),
    ApiExtension('x-rate-limit', names),
    ApiTooManyRequestsResponse({
      description: `Rate limited (${names.map((n) => `${n}: ${NAMED_RATE_LIMITS[n].what}`).join(', ')})`,
      type: ErrorBodyDto,
      headers: RATE_LIMIT_HEADERS,
    }),
  );

/** Exempts a route (such as a health probe) from every budget. */
export const SkipRateLimit = () => SetMetadata(SKIP_RATE_LIMIT, true);
