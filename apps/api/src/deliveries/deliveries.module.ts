import { Inject, Module, OnModuleDestroy } from '@nestjs/common';
import { DeliveryQueue } from '@app/events';
import { Redis, RedisKeys } from '@app/redis';
import { REDIS_CLIENT } from '@app/infra';
import { DestinationsModule } from '../destinations/destinations.module';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesService } from './deliveries.service';

/** Webhook delivery log, replay and test sends (CONTRACT 4); the POSTs themselves are the dispatcher's. */
@Module({
  imports: [DestinationsModule],
  controllers: [DeliveriesController],
  providers: [
    DeliveriesService,
    { provide: DeliveryQueue, inject: [REDIS_CLIENT, RedisKeys], useFactory: (redis: Redis, keys: RedisKeys) => new DeliveryQueue(redis, keys) },
  ],
  // the event sinks' delivery log, replay and test sends are the same service's (CONTRACT 15)
  exports: [DeliveriesService],
})
export class DeliveriesModule implements OnModuleDestroy {
  constructor(@Inject(DeliveryQueue) private readonly queue: DeliveryQueue) {}

  async onModuleDestroy(): Promise<void> {
    await this.queue.close();
  }
}
