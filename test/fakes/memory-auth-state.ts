import type { AuthStateStore } from '../../apps/gateway/src/engine/engine.interface';

/** AuthStateStore in memory, with JSON round-trips so values behave as they would through PostgreSQL. */
export class MemoryAuthStateStore implements AuthStateStore {
  private creds: string | null = null;
  private readonly keys = new Map<string, string>();

  constructor(readonly sessionId: string) {}

  async readCreds<T = unknown>(): Promise<T | null> {
    return this.creds === null ? null : (JSON.parse(this.creds) as T);
  }

  async writeCreds(creds: unknown): Promise<void> {
    this.creds = JSON.stringify(creds);
  }

  async readKeys<T = unknown>(category: string, ids: string[]): Promise<Record<string, T>> {
    const out: Record<string, T> = {};
    for (const id of ids) {
      const v = this.keys.get(`${category}:${id}`);
      if (v !== undefined) out[id] = JSON.parse(v) as T;
    }
    return out;
  }

  async writeKeys(data: Record<string, Record<string, unknown | null>>): Promise<void> {
    for (const [category, entries] of Object.entries(data)) {
      for (const [id, value] of Object.entries(entries)) {
        if (value === null) this.keys.delete(`${category}:${id}`);
        else this.keys.set(`${category}:${id}`, JSON.stringify(value));
      }
    }
  }

  async clear(): Promise<void> {
    this.creds = null;
    this.keys.clear();
  }
}
