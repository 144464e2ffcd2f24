import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { LimitsModule } from '../limits/limits.module';
import { AccountController } from './account.controller';
import { ApiKeysService } from './api-keys.service';
import { LinkMailer } from './link-mailer';
import { MembersService } from './members.service';
import { OrganizationController } from './organization.controller';
import { OrganizationService } from './organization.service';
import { PrincipalAnnouncer } from './principal-announcer';

/** Organizations run themselves (CONTRACT 14): the organization, its members and invitations, its API keys. */
@Module({
  imports: [AuthModule, LimitsModule],
  controllers: [OrganizationController, AccountController],
  providers: [OrganizationService, MembersService, ApiKeysService, LinkMailer, PrincipalAnnouncer],
})
export class OrganizationModule {}
