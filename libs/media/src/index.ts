export * from './media-source';
