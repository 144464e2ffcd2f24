export * from './delivery-queue';
export * from './event-publisher';
export * from './event-stream';
