export * from './send-rate-limiter';
export * from './send-signal';
export * from './inbound-spool';
export * from './campaign-signal';
export * from './campaigns';
export * from './wa-message-id';
