import type { Logger } from 'pino';
import type { AuthStateStore, EngineConnection, SessionEngine } from '../engine/engine.interface';
import type { SessionRecords } from '../store-ports';
import { EventNotTakenError } from './session-errors';
import type { SessionLeases, Timers } from './session-ports';

/**
 * The logout of a paired session that has no socket here (stopped, failed, just moved): a short-lived socket with the
 * stored credentials, only to tell the network to unlink the device. A part of SessionRunner.logout.
 */
export interface OfflineUnlinkDeps {
  sessionId: string;
  engine: SessionEngine;
  auth: AuthStateStore;
  leases: SessionLeases;
  records: SessionRecords;
  timers: Timers;
  log: Logger;
  /** the lease was taken with this fencing token: the logout's row write that follows is fenced on it */
  fenceOn: (token: number) => void;
}

export async function unlinkOffline(deps: OfflineUnlinkDeps, timeoutMs: number): Promise<void> {
  const { sessionId, log, timers } = deps;
  const token = await deps.leases.acquire(sessionId, () => deps.records.takeLeaseToken(sessionId));
  if (token === null) {
    log.warn('cannot unlink: another gateway holds the session');
    return;
  }
  deps.fenceOn(token);
  let settle: (opened: boolean) => void = () => undefined;
  const opened = new Promise<boolean>((resolve) => (settle = resolve));
  let timer: unknown = null;
  let conn: EngineConnection | null = null;
  try {
    conn = await deps.engine.connect({
      sessionId,
      auth: deps.auth,
      logger: log,
      onEvent: async (e) => {
        if (e.type === 'open') settle(true);
        else if (e.type === 'qr' || e.type === 'close') settle(false);
        // nothing of this short unlink socket is taken: what the network hands it stays for the next connection
        else throw new EventNotTakenError(e.type, 'an unlink-only connection');
      },
    });
    timer = timers.setTimeout(() => settle(false), Math.max(timeoutMs, 0));
    if (await opened) await conn.logout();
    else await conn.close();
  } catch (err) {
    log.warn({ err: String(err) }, 'unlinking a disconnected session failed');
    await conn?.close().catch(() => undefined);
  } finally {
    if (timer !== null) timers.clearTimeout(timer);
  }
}
