export * from './event-publisher';
