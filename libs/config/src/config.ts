/** Each app's configuration, validated from the environment at boot (`loadConfig`); one file per app. */
export { BaseConfig, KNOWN_PLACEHOLDER_SECRETS } from './base.config';
export * from './api.config';
export * from './gateway.config';
export * from './dispatcher.config';
export * from './sim.config';
export * from './cli.config';
