import { Module } from '@nestjs/common';
import { ApiKeysModule } from '@/modules/api-keys/api-keys.module';
import { AuditModule } from '@/modules/audit/audit.module';
import { MembersController } from './members.controller';
import { MembersService } from './members.service';

@Module({ imports: [AuditModule, ApiKeysModule], controllers: [MembersController], providers: [MembersService] })
export class MembersModule {}
