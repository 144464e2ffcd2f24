export * from './messages.repository';
