import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from './data-source';
import { ENTITIES } from './entities';

@Module({})
export class DatabaseModule {
  /** TypeORM connection from a DATABASE_URL provider, plus repositories of every entity. */
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
      exports: [TypeOrmModule],
    };
  }
}
