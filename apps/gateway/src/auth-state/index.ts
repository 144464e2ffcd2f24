export * from './pg-auth-state.store';
export * from './auth-state-json';
