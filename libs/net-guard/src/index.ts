export * from './address-class';
export * from './guarded-connector';
export * from './target-host';
