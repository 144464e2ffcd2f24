import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './support/run-context';

/**
 * Issue 19 item 13: a stray rejection or exception inside a session's socket code must not end the gateway process.
 * A real Node process (no jest in between: jest installs handlers of its own) with the gateway's StrayFaults and
 * session context from dist/, as main.ts installs them; faults thrown from timers started in two sessions' contexts
 * and one outside any. Without the handlers Node exits with code 1 at the first.
 */
const CHILD = `
const { StrayFaults } = require(${JSON.stringify(join(REPO_ROOT, 'dist/apps/gateway/src/stray-faults'))});
const { runInSessionContext, currentSessionId } = require(${JSON.stringify(join(REPO_ROOT, 'dist/apps/gateway/src/engine/session-context'))});
const restarted = [];
const seen = [];
let faults = 0;
new StrayFaults({
  logger: { error: (fields, message) => seen.push({ message, sessionId: fields.sessionId ?? null, kind: fields.kind ?? null }) },
  sessionOf: currentSessionId,
  restartSession: async (sessionId) => { restarted.push(sessionId); return true; },
  count: () => { if (++faults === 3) setImmediate(() => process.stdout.write(JSON.stringify({ restarted, seen }))); },
}).install();
runInSessionContext('ses_a', () => setTimeout(() => Promise.reject(new Error('bad MAC')), 1));
runInSessionContext('ses_b', () => setTimeout(() => { throw new Error('thrown in a callback'); }, 2));
setTimeout(() => Promise.reject(new Error('outside any session')), 3);
`;

describe('gateway stray faults (real process)', () => {
  it('the process survives a stray rejection and exception, traced to their sessions, and exits on its own with 0', async () => {
    const child = spawn(process.execPath, ['-e', CHILD], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    try {
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect({ code, err }).toEqual({ code: 0, err: '' });
      const report = JSON.parse(out) as { restarted: string[]; seen: Array<{ message: string; sessionId: string | null; kind: string }> };
      expect(report.restarted).toEqual(['ses_a', 'ses_b']);
      expect(report.seen.map((s) => [s.kind, s.sessionId])).toEqual([
        ['unhandled_rejection', 'ses_a'],
        ['uncaught_exception', 'ses_b'],
        ['unhandled_rejection', null],
      ]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
