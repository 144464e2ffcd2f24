import { Module } from '@nestjs/common';
import { DeliveriesModule } from '../deliveries/deliveries.module';
import { DestinationsModule } from '../destinations/destinations.module';
import { EventSinksController } from './event-sinks.controller';
import { EventSinksService } from './event-sinks.service';

/** RabbitMQ and NATS JetStream destinations (CONTRACT 15); their publishes are the webhook dispatcher's. */
@Module({
  imports: [DeliveriesModule, DestinationsModule],
  controllers: [EventSinksController],
  providers: [EventSinksService],
})
export class EventSinksModule {}
