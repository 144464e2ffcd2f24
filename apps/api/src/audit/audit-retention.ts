import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { AuditLogRepository } from '@app/database';

const DAY_MS = 86_400_000;
const BATCH = 5_000;

/**
 * The audit log's retention: every AUDIT_RETENTION_SWEEP_MS, each API replica deletes entries older than
 * AUDIT_RETENTION_DAYS in batches (idempotent, so replicas sweeping at once only share the work).
 */
@Injectable()
export class AuditRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AuditRetention.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly config: ApiConfig,
    private readonly log: AuditLogRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep().catch((err: Error) => this.logger.warn(`audit retention sweep failed: ${err.message}`)), this.config.AUDIT_RETENTION_SWEEP_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One sweep; returns how many entries it deleted. */
  async sweep(now = Date.now()): Promise<number> {
    if (this.running) return this.running;
    this.running = (async () => {
      const before = new Date(now - this.config.AUDIT_RETENTION_DAYS * DAY_MS);
      let total = 0;
      for (;;) {
        const n = await this.log.deleteOlderThan(before, BATCH);
        total += n;
        if (n < BATCH) break;
      }
      if (total) this.logger.log(`audit retention: deleted ${total} entries older than ${before.toISOString()}`);
      return total;
    })().finally(() => (this.running = null));
    return this.running;
  }
}
