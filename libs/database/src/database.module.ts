import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, genericPlansPool } from './data-source';
import { REPOSITORIES } from './repositories';

@Module({})
export class DatabaseModule {
  /** TypeORM connection from a DATABASE_URL provider, plus one repository per table (the only place that queries it). */
  /** `genericPlans`: every prepared statement runs its generic plan (`genericPlansPool`), for a process of key lookups only. */
  static forRoot(
    databaseUrlToken: string | symbol | (abstract new (...args: never[]) => { DATABASE_URL: string }),
    poolMax?: number,
    genericPlans = false,
  ): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [databaseUrlToken as never],
          useFactory: (config: { DATABASE_URL: string }) =>
            dataSourceOptions(config.DATABASE_URL, genericPlans ? { extra: genericPlansPool(poolMax) } : poolMax ? { extra: { max: poolMax } } : {}),
        }),
      ],
      providers: REPOSITORIES,
      exports: [TypeOrmModule, ...REPOSITORIES],
    };
  }
}
