export * from './media-store';
export * from './postgres-media-store';
export * from './s3-media-store';
export * from './create-media-store';
export * from './read-capped';
