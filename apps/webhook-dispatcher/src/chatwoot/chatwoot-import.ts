import type { Logger } from 'pino';
import { serviceSession, toMessageView, type ChatwootRepository, type MessageRow, type MessagesRepository } from '@app/database';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import type { ChatwootDestination } from './chatwoot-destination';

/** Messages shown per batch, and the pause between two batches: live deliveries go between them. */
const BATCH = 25;
const PAUSE_MS = 250;
/** At most this many messages are imported per integration (the newest of the window). */
const MAX_IMPORTED = 5000;
/** An import whose holder stopped beating this long ago (a killed dispatcher) is taken over. */
const STALE_S = 60;

/**
 * `importDays` (CONTRACT 16): the session's recent history, as the message log holds it, shown in Chatwoot once,
 * oldest first, in small batches beside live traffic (live events are delivered by the pipeline meanwhile; a chat's
 * events and its imported messages are serialized by the destination). Resumable: each message is recorded in the
 * links table as it is shown, so an import taken over after a crash skips what is already there.
 */
export class ChatwootImporter {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly destination: ChatwootDestination,
    private readonly chatwoot: ChatwootRepository,
    private readonly messages: MessagesRepository,
    private readonly targetOf: (id: string) => Promise<WebhookTarget | null>,
    private readonly log: Logger,
    private readonly intervalMs = 2000,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick()
        .catch((err: Error) => this.log.warn({ err: err.message }, 'chatwoot history import failed; retried'))
        .finally(() => (this.running = null));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private async tick(): Promise<void> {
    for (const id of await this.chatwoot.importsToDo()) {
      if (this.stopped) return;
      if (!(await this.chatwoot.claimImport(id, STALE_S))) continue;
      await this.importOne(id);
    }
  }

  private async importOne(id: string): Promise<void> {
    const target = await this.targetOf(id);
    const settings = target?.target.chatwoot;
    if (!target || !settings || !target.secret || !target.sessionId) return;
    const since = Date.now() - settings.importDays * 86_400_000;
    const rows = await this.window(target.sessionId, since);
    const d = { integrationId: id, account: { baseUrl: target.url, accountId: settings.accountId, token: target.secret }, settings };
    for (let i = 0; i < rows.length; i += BATCH) {
      if (this.stopped) return;
      let shown = 0;
      for (const row of rows.slice(i, i + BATCH)) {
        if (!this.destination.shows(row, settings.groups)) continue;
        await this.destination.importMessage(d, toMessageView(row));
        shown++;
      }
      await this.chatwoot.recordImported(id, shown, false);
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
    await this.chatwoot.recordImported(id, 0, true);
    this.log.info({ integrationId: id, messages: rows.length }, 'chatwoot history imported');
  }

  /** The session's messages since `since`, oldest first (the log pages newest first). */
  private async window(sessionId: string, since: number): Promise<MessageRow[]> {
    const rows: MessageRow[] = [];
    let cursor: string | undefined;
    while (rows.length < MAX_IMPORTED) {
      const page = await this.messages.page(serviceSession(sessionId), {}, 200, cursor);
      const recent = page.filter((r) => r.createdAt >= since);
      rows.push(...recent);
      if (page.length < 200 || recent.length < page.length) break;
      cursor = page[page.length - 1].id;
    }
    return rows.reverse();
  }
}
