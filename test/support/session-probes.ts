import type request from 'supertest';
import { waitFor } from './processes';
import { bearer, testDataSource } from './seed';

/** A session as the API shows it, polled until it reaches a status (tests await events, never sleep). */
export function sessionProbes(api: () => ReturnType<typeof request>, token: () => string) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, asserted field by field in tests
  const getSession = async (id: string, as = token()): Promise<any> => (await api().get(`/api/v1/sessions/${id}`).set(bearer(as))).body;
  const waitStatus = (id: string, status: string, timeoutMs = 10000) =>
    waitFor(async () => {
      const s = await getSession(id);
      return s.status === status ? s : null;
    }, timeoutMs, `session ${id} to be ${status}`);
  return { getSession, waitStatus };
}

/** The outbox events of one session and type, oldest first, as stored in PostgreSQL. */
export async function storedEvents(sessionId: string, type: string): Promise<Array<{ payload: Record<string, unknown>; event: string }>> {
  const db = await testDataSource();
  const rows: Array<{ envelope: { payload: Record<string, unknown>; event: string } }> = await db.query(
    'SELECT envelope FROM events WHERE session_id = $1 AND type = $2 ORDER BY id',
    [sessionId, type],
  );
  return rows.map((r) => r.envelope);
}
