export * from './template';
export * from './send-window';
