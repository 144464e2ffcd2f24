export * from './send-rate-limiter';
export * from './send-signal';
export * from './inbound-spool';
