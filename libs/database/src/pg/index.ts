export * from './db';
export * from './prepared-statement';
export * from './entity-reader';
