export * from './errors';
export * from './auth';
export * from './sessions';
export * from './webhooks';
export * from './events';
export * from './commands';
export * from './network-sim';
export * from './messages';
