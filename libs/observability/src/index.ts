export * from './logger';
export * from './ops-server';
export * from './lifecycle';
export * from './request-log';
