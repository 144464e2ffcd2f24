// The baileys pass of the engine matrix (jest.config.js project `e2e-baileys`, docs/testing.md): the suites' gateways
// run the real engine against the simulator's WhatsApp Web front door (test/support/engine.ts reads this).
process.env.E2E_ENGINE = 'baileys';
