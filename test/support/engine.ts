import type request from 'supertest';
import { waitFor } from './processes';

/**
 * The engine matrix (docs/testing.md): the core e2e suites run once with the gateway on the `sim` engine (the
 * simulator's own device protocol) and once on `baileys` (the real engine against the simulator's WhatsApp Web front
 * door). `E2E_ENGINE` picks the pass; jest.baileys.config.js sets it for the baileys pass of `npm test`.
 */
export type Engine = 'sim' | 'baileys';

function engineFromEnv(): Engine {
  const value = process.env.E2E_ENGINE ?? 'sim';
  if (value !== 'sim' && value !== 'baileys') throw new Error(`E2E_ENGINE must be sim or baileys, not ${value}`);
  return value;
}

export const E2E_ENGINE: Engine = engineFromEnv();

/**
 * A gateway's engine variables for a simulator at `simUrl`. On baileys also a heartbeat and lease TTL a first login
 * can live with: Baileys generates and stores 812 pre-keys then, blocking the event loop for a second or more on a
 * loaded machine, and a short TTL would fence the node (docs/testing.md). `tuning` (a suite's own heartbeat and TTL)
 * is kept on sim and raised to those floors on baileys.
 */
export function engineEnv(simUrl: string, tuning: Record<string, string> = {}, engine: Engine = E2E_ENGINE): Record<string, string> {
  if (engine === 'sim') return { GATEWAY_ENGINE: 'sim', NETWORK_SIM_URL: simUrl, ...tuning };
  const atLeast = (key: string, floor: number) => ({ [key]: String(Math.max(Number(tuning[key] ?? floor), floor)) });
  return {
    GATEWAY_ENGINE: 'baileys',
    NETWORK_SIM_URL: simUrl,
    WHATSAPP_EMULATOR_URL: simUrl,
    ...tuning,
    ...atLeast('GATEWAY_HEARTBEAT_MS', 1000),
    ...atLeast('GATEWAY_TTL_MS', 10000),
  };
}

/**
 * A case the engine of this pass cannot run yet: skipped on `engine` (its title says why and names the issue that will
 * make it run), run everywhere else. Greppable: `knownFailure(`. Never delete such a case; fix the engine and drop the
 * marker.
 */
export function knownFailure(engine: Engine, issue: string, name: string, fn: jest.ProvidesCallback, timeout?: number): void {
  // E2E_RUN_KNOWN_FAILURES=1 runs them anyway: how to find out which ones an engine change fixed
  if (E2E_ENGINE === engine && process.env.E2E_RUN_KNOWN_FAILURES !== '1') it.skip(`${name} [known failure on ${engine}: ${issue}]`, fn);
  else it(name, fn, timeout);
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Per engine: how long a first pairing may take (the real engine uploads its pre-keys first). */
export const PAIRING_TIMEOUT_MS = E2E_ENGINE === 'baileys' ? 30000 : 10000;

type Api = () => ReturnType<typeof request>;

/**
 * Pairs a session by QR, as a phone does on either engine: waits for the QR the API shows, then the phone scans it
 * through the simulator's control API (`{phoneNumber, qr}`; the WhatsApp Web door needs the QR for the adv secret
 * only the screen shows, the sim engine checks it is current). Resolves with the session once it is `working`.
 * Scan answers other than 200 throw. `phoneNumber` omitted: the simulator draws one.
 */
export async function pairSession(
  opts: { api: Api; token: string; simUrl: string; sessionId: string; phoneNumber?: string; timeoutMs?: number; waitWorking?: boolean },
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's session JSON, asserted field by field in tests
): Promise<any> {
  const { api, token, simUrl, sessionId } = opts;
  const timeoutMs = opts.timeoutMs ?? PAIRING_TIMEOUT_MS;
  const qr: string = await waitFor(
    async () => {
      const res = await api().get(`/api/v1/sessions/${sessionId}/qr`).set(bearer(token));
      return res.status === 200 ? res.body.qr : null;
    },
    timeoutMs,
    `a QR for ${sessionId}`,
  );
  const res = await fetch(`${simUrl}/sim/sessions/${sessionId}/scan`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(opts.phoneNumber ? { phoneNumber: opts.phoneNumber, qr } : { qr }),
  });
  if (res.status !== 200) throw new Error(`scan of ${sessionId} answered ${res.status}: ${await res.text()}`);
  if (opts.waitWorking === false) return null;
  return waitFor(
    async () => {
      const s = (await api().get(`/api/v1/sessions/${sessionId}`).set(bearer(token))).body;
      return s.status === 'working' ? s : null;
    },
    timeoutMs,
    `session ${sessionId} to be working`,
  );
}
