import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, GENERIC_PLANS } from './data-source';
import { REPOSITORIES } from './repositories';

@Module({})
export class DatabaseModule {
  /**
   * TypeORM connection from a DATABASE_URL provider, plus one repository per table (the only place that queries it).
   * `genericPlans`: every prepared statement runs its generic plan (`GENERIC_PLANS`), for a process of key lookups only.
   */
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
            dataSourceOptions(config.DATABASE_URL, { extra: { ...(poolMax ? { max: poolMax } : {}), ...(genericPlans ? GENERIC_PLANS : {}) } }),
        }),
      ],
      providers: REPOSITORIES,
      exports: [TypeOrmModule, ...REPOSITORIES],
    };
  }
}
