import { Module } from '@nestjs/common';
import { ApiKeysModule } from '@/modules/api-keys/api-keys.module';
import { OrganizationsService } from './organizations.service';

@Module({ imports: [ApiKeysModule], providers: [OrganizationsService], exports: [OrganizationsService] })
export class OrganizationsModule {}
