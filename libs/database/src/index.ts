export * from './entities';
export * from './migrations';
export * from './data-source';
export * from './database.module';
export * from './ids';
export * from './leader-lock';
export * from './pg-array';
export * from './repositories';
