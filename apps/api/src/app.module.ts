import { DynamicModule, Module } from '@nestjs/common';
import { ApiConfig, ConfigOverrides } from '@app/config';
import { InfraModule } from '@app/infra';
import { AuthModule } from './auth/auth.module';
import { ContactsModule } from './contacts/contacts.module';
import { DashboardModule } from './dashboard/dashboard.module';
import { DeliveriesModule } from './deliveries/deliveries.module';
import { EventSinksModule } from './event-sinks/event-sinks.module';
import { GroupsModule } from './groups/groups.module';
import { HealthModule } from './health/health.module';
import { LimitsModule } from './limits/limits.module';
import { MessagesModule } from './messages/messages.module';
import { CampaignsModule } from './campaigns/campaigns.module';
import { ChatsModule } from './chats/chats.module';
import { RealtimeModule } from './realtime/realtime.module';
import { SessionsModule } from './sessions/sessions.module';
import { StatsModule } from './stats/stats.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { AccountExtrasModule } from './account-extras/account-extras.module';
import { AuditModule } from './audit/audit.module';
import { OrganizationModule } from './organization/organization.module';
import { ChatwootModule } from './integrations/chatwoot/chatwoot.module';

/** `overrides`: configuration decided by the caller over the environment's (the CLI boots the API silent). */
function imports(overrides: ConfigOverrides) {
  return [
    InfraModule.forRoot({ app: 'api', config: ApiConfig, overrides, redisFailFast: true }),
    HealthModule,
    LimitsModule,
    AuthModule,
    WebhooksModule,
    RealtimeModule,
    DeliveriesModule,
    EventSinksModule,
    SessionsModule,
    MessagesModule,
    CampaignsModule,
    ContactsModule,
    ChatsModule,
    DashboardModule,
    GroupsModule,
    AccountExtrasModule,
    AuditModule,
    OrganizationModule,
    StatsModule,
    ChatwootModule,
  ];
}

@Module({})
export class AppModule {
  static forRoot(overrides: ConfigOverrides = {}): DynamicModule {
    return { module: AppModule, imports: imports(overrides) };
  }
}
