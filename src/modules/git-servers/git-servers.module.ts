import { Module } from '@nestjs/common';
import { AuditModule } from '@/modules/audit/audit.module';
import { GitProvidersModule } from '@/modules/git-providers/git-providers.module';
import { GitServersController } from './git-servers.controller';
import { GitServersService } from './git-servers.service';

@Module({ imports: [AuditModule, GitProvidersModule], controllers: [GitServersController], providers: [GitServersService] })
export class GitServersModule {}
