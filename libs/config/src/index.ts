export * from './load-config';
export * from './config';
export * from './package-version';
