import { Module } from '@nestjs/common';
import { ApiKeysModule } from '@/modules/api-keys/api-keys.module';
import { AuditModule } from '@/modules/audit/audit.module';
import { OrganizationsService } from './organizations.service';

@Module({ imports: [ApiKeysModule, AuditModule], providers: [OrganizationsService], exports: [OrganizationsService] })
export class OrganizationsModule {}
