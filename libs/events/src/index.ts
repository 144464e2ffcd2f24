export * from './event-publisher';
export * from './webhook-changes';
