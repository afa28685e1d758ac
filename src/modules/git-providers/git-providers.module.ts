import { Module } from '@nestjs/common';
import { GitProviders } from './git-providers.service';

/** The git provider port and its implementations; the only module that talks to providers. */
@Module({ providers: [GitProviders], exports: [GitProviders] })
export class GitProvidersModule {}
