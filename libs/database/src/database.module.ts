import { DynamicModule, Module } from '@nestjs/common';
import { GENERIC_PLANS, poolSettings } from './data-source';
import { Db } from './pg';
import { REPOSITORIES } from './repositories';

@Module({})
export class DatabaseModule {
  /**
   * The process's `Db` (the pg pool every repository runs on) from a DATABASE_URL provider, plus one repository per
   * table (the only place that queries it). Shutdown closes the pool. TypeORM is the migrations' tool only (`migrate()`,
   * a data source of its own at boot; decision 84). `genericPlans`: every prepared statement runs its generic plan (`GENERIC_PLANS`), for a process of key
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
      providers: [{ provide: Db, inject: [databaseUrlToken as never], useFactory: (config: { DATABASE_URL: string }) => Db.open(poolSettings(config.DATABASE_URL, extra)) }, ...REPOSITORIES],
      exports: [Db, ...REPOSITORIES],
    };
  }
}
