export * from './pg-auth-state.store';
