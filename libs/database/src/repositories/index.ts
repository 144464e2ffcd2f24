export * from './deliveries.repository';
export * from './delivery-attempts.repository';
export * from './events.repository';
