export * from './media-source';
export * from './sim-media-source';
