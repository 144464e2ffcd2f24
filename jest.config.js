/**
 * Three projects: unit specs beside the code; e2e in test/ against real PostgreSQL, Redis and processes (gateways on
 * the `sim` engine); and e2e-baileys, the engine matrix's second pass: the core suites again with their gateways on the
 * real engine against the simulator's WhatsApp Web front door (E2E_ENGINE=baileys, docs/testing.md).
 */
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.json');

const shared = {
  rootDir: __dirname,
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json', diagnostics: false }] },
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
};

const e2e = {
  ...shared,
  // kills whatever a test file's processes left running (test/support/process-registry.ts)
  testEnvironment: '<rootDir>/test/support/e2e-environment.js',
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

/**
 * The suites that run on both engines (each makes its pairing and gateways engine-neutral through test/support/engine.ts).
 * fleet-rebalance moves paired devices on baileys (fewer of them), unpaired sessions on sim.
 */
const ENGINE_MATRIX = ['sessions', 'messages-flow', 'fleet-failover', 'fleet-drain', 'fleet-rebalance', 'fleet-fencing', 'calls', 'campaigns', 'campaigns-fleet', 'chatwoot'];

module.exports = {
  testTimeout: 30000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/apps/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts'] },
    { ...e2e, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'], setupFiles: ['<rootDir>/test/support/env.ts'] },
    {
      ...e2e,
      displayName: 'e2e-baileys',
      testMatch: ENGINE_MATRIX.map((name) => `<rootDir>/test/${name}.e2e-spec.ts`),
      setupFiles: ['<rootDir>/test/support/engine-baileys.js', '<rootDir>/test/support/env.ts'],
    },
  ],
};
