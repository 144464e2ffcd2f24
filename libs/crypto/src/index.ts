export * from './secret-box';
export * from './passwords';
export * from './tokens';
export * from './ulid';
