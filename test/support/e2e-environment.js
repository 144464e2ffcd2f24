/*
 * The e2e test environment: Node's, plus the last word on processes. Its teardown runs after every hook of the test
 * file, even when a test failed or timed out, and SIGKILLs the process group of every process the file registered
 * (test/support/process-registry.ts) that is still alive, so a frozen or forgotten child never keeps jest from
 * exiting. Plain JavaScript: jest loads environments without the TypeScript transform.
 */
const { rmSync } = require('node:fs');
const { TestEnvironment } = require('jest-environment-node');

const REGISTRY_GLOBAL = '__gwE2eProcesses'; // = process-registry.ts REGISTRY_GLOBAL

class E2eEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async teardown() {
    const registered = this.global[REGISTRY_GLOBAL];
    for (const [pid, { name, pidFile }] of registered ?? []) {
      try {
        process.kill(-pid, 'SIGKILL');
        process.stderr.write(`e2e: killed ${name} (pid ${pid}) left running by ${this.testPath}\n`);
      } catch {
        /* already gone */
      }
      if (pidFile) rmSync(pidFile, { force: true });
    }
    registered?.clear();
    await super.teardown();
  }
}

module.exports = E2eEnvironment;
