export * from './delivery-queue';
export * from './event-publisher';
export * from './webhook-changes';
export * from './event-stream';
export * from './reconcile-lock';
export * from './principal-changes';
export * from './change-channel';
