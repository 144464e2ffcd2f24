export * from './send-rate-limiter';
export * from './send-signal';
