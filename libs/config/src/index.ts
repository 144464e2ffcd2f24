export * from './load-config';
export * from './config';
