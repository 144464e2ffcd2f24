export * from './address-class';
export * from './guarded-connector';
export * from './target-host';
export * from './allow-list';
export * from './target-check';
export * from './address-ranges';
