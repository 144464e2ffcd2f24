export * from './media-source';
export * from './baileys-media-source';
