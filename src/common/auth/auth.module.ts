import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import { BearerAuthGuard } from './bearer-auth.guard';

@Global()
@Module({
  providers: [ApiKeyAuthenticator, { provide: APP_GUARD, useClass: BearerAuthGuard }],
  exports: [ApiKeyAuthenticator],
})
export class AuthModule {}
