import { Injectable, Logger } from '@nestjs/common';
import type { PrincipalChange } from '@app/contracts';
import { PrincipalChanges } from '@app/events';
import { REDIS_CLIENT } from '@app/infra';
import { Inject } from '@nestjs/common';
import { Redis, RedisKeys } from '@app/redis';

/**
 * Tells every API replica that a key or user changed, after the change committed (docs/auth.md, "instant
 * everywhere"). If Redis refuses the announcement the request fails (500) after the commit: the change stands, and
 * repeating the call announces again; every replica's principal cache also drops everything on a subscription gap.
 */
@Injectable()
export class PrincipalAnnouncer {
  private readonly logger = new Logger(PrincipalAnnouncer.name);
  private readonly channel: PrincipalChanges;

  constructor(@Inject(REDIS_CLIENT) redis: Redis, keys: RedisKeys) {
    this.channel = new PrincipalChanges(redis, keys);
  }

  async announce(change: PrincipalChange): Promise<void> {
    try {
      await this.channel.announce(change);
    } catch (err) {
      this.logger.error(`announcing a change of ${change.kind} ${change.id} failed: ${(err as Error).message}`);
      throw err;
    }
  }
}
