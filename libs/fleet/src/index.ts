export * from './adopt-signal';
export * from './command-bus';
export * from './fleet-logger';
export * from './gateway-registry';
export * from './gateway-signals';
export * from './qr-board';
export * from './session-leases';
export * from './session-placement';
