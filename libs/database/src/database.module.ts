import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions } from './data-source';
import { REPOSITORIES } from './repositories';

@Module({})
export class DatabaseModule {
  /** TypeORM connection from a DATABASE_URL provider, plus one repository per table (the only place that queries it). */
  static forRoot(databaseUrlToken: string | symbol | (abstract new (...args: never[]) => { DATABASE_URL: string }), poolMax?: number): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [databaseUrlToken as never],
          useFactory: (config: { DATABASE_URL: string }) =>
            dataSourceOptions(config.DATABASE_URL, poolMax ? { extra: { max: poolMax } } : {}),
        }),
      ],
      providers: REPOSITORIES,
      exports: [TypeOrmModule, ...REPOSITORIES],
    };
  }
}
