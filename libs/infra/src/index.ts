export * from './infra.module';
export * from './metrics';
export * from './tokens';
export * from './ops-endpoints';
export * from './store-outage';
export * from './group-commit';
