export * from './redis';
export * from './rate-windows';
export * from './request-limits';
