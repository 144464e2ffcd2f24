export * from './address-class';
export * from './guarded-connector';
