export * from './baileys.engine';
export type { BaileysRuntime } from './baileys-runtime';
