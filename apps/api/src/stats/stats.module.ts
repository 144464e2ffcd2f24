import { Module } from '@nestjs/common';
import { DeliveryLogRepository, MessagesRepository, SessionsRepository, WebhooksRepository } from '@app/database';
import { StatsController } from './stats.controller';
import { StatsService } from './stats.service';

/** `GET /stats/overview`: the dashboard's Overview figures, read from the repositories of each table. */
@Module({
  controllers: [StatsController],
  providers: [
    {
      provide: StatsService,
      inject: [SessionsRepository, MessagesRepository, DeliveryLogRepository, WebhooksRepository],
      useFactory: (s: SessionsRepository, m: MessagesRepository, d: DeliveryLogRepository, w: WebhooksRepository) => new StatsService(s, m, d, w),
    },
  ],
})
export class StatsModule {}
