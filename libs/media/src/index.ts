export * from './media-source';
export * from './sim-media-source';
export * from './baileys-media-source';
export * from './store';
export * from './whatsapp-media-host';
