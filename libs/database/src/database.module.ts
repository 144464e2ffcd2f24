import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from './data-source';
import { ENTITIES } from './entities';
import { DeliveriesRepository, DeliveryAttemptsRepository, EventsRepository } from './repositories';

/** One repository per table: every query of the table is a named method of it. */
const REPOSITORIES = [DeliveriesRepository, DeliveryAttemptsRepository, EventsRepository];

@Module({})
export class DatabaseModule {
  /** TypeORM connection from a DATABASE_URL provider, the entities' TypeORM repositories and ours. */
  static forRoot(databaseUrlToken: string | symbol | (abstract new (...args: never[]) => { DATABASE_URL: string })): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [databaseUrlToken as never],
          useFactory: (config: { DATABASE_URL: string }) => dataSourceOptions(config.DATABASE_URL),
        }),
        TypeOrmModule.forFeature(ENTITIES),
      ],
      providers: REPOSITORIES,
      exports: [TypeOrmModule, ...REPOSITORIES],
    };
  }
}
