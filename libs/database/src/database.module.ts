import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, GENERIC_PLANS, poolSettings } from './data-source';
import { Db } from './pg';
import { REPOSITORIES } from './repositories';

@Module({})
export class DatabaseModule {
  /**
   * The process's `Db` (the pg pool every repository runs on) and the TypeORM data source, both from a DATABASE_URL
   * provider with the same pool settings, plus one repository per table (the only place that queries it). Shutdown
   * closes both. `genericPlans`: every prepared statement runs its generic plan (`GENERIC_PLANS`), for a process of key
   * lookups only.
   */
  static forRoot(
    databaseUrlToken: string | symbol | (abstract new (...args: never[]) => { DATABASE_URL: string }),
    poolMax?: number,
    genericPlans = false,
  ): DynamicModule {
    const extra = { ...(poolMax ? { max: poolMax } : {}), ...(genericPlans ? GENERIC_PLANS : {}) };
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [databaseUrlToken as never],
          useFactory: (config: { DATABASE_URL: string }) => dataSourceOptions(config.DATABASE_URL, { extra }),
        }),
      ],
      providers: [{ provide: Db, inject: [databaseUrlToken as never], useFactory: (config: { DATABASE_URL: string }) => Db.open(poolSettings(config.DATABASE_URL, extra)) }, ...REPOSITORIES],
      exports: [TypeOrmModule, Db, ...REPOSITORIES],
    };
  }
}
