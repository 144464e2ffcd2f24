import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Queue, QueueEvents } from 'bullmq';
import { ApiConfig } from '@app/config';
import { CommandMap, CommandName, CommandReply, CommandRequest, DomainError, gatewayCommandQueue } from '@app/contracts';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import { REDIS_CLIENT } from '../infra/tokens';

interface Channel {
  queue: Queue;
  events: QueueEvents;
  /** QueueEvents blocks on its connection, so each channel has its own; BullMQ leaves a handed-in one open */
  eventsConnection: Redis;
}

/**
 * Sends a command to one gateway over its own BullMQ queue and waits for the reply (the job's return value).
 * No reply within COMMAND_TIMEOUT_MS is 503 gateway_unavailable: the job is removed if still waiting, and the
 * gateway refuses it anyway once its deadline has passed, so a late gateway never acts on a request already answered.
 */
@Injectable()
export class CommandBus implements OnModuleDestroy {
  private readonly channels = new Map<string, Promise<Channel>>();
  private readonly logger = new Logger(CommandBus.name);

  constructor(
    private readonly config: ApiConfig,
    private readonly keys: RedisKeys,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
  ) {}

  async send<N extends CommandName>(gatewayId: string, name: N, args: CommandMap[N]['args']): Promise<CommandMap[N]['result']> {
    const timeout = this.config.COMMAND_TIMEOUT_MS;
    const request: CommandRequest<N> = { name, args, deadline: Date.now() + timeout };
    const channel = await this.channel(gatewayId);
    const job = await channel.queue.add(name, request, {
      attempts: 1,
      removeOnComplete: { age: 60 },
      removeOnFail: { age: 60 },
    });
    let reply: CommandReply<N>;
    try {
      reply = (await job.waitUntilFinished(channel.events, timeout)) as CommandReply<N>;
    } catch (err) {
      await job.remove().catch(() => undefined);
      this.logger.warn(`gateway ${gatewayId} did not answer ${name} in ${timeout} ms: ${String((err as Error)?.message ?? err)}`);
      throw new DomainError('gateway_unavailable', 'the session’s gateway did not answer in time', { gatewayId });
    }
    if (!reply || typeof reply !== 'object') throw new DomainError('internal', 'the gateway sent an unreadable reply');
    if (!reply.ok) throw new DomainError(reply.error.code, reply.error.message, reply.error.details ?? {});
    return reply.result;
  }

  private channel(gatewayId: string): Promise<Channel> {
    let channel = this.channels.get(gatewayId);
    if (!channel) {
      channel = this.openChannel(gatewayId);
      this.channels.set(gatewayId, channel);
      channel.catch(() => this.channels.delete(gatewayId));
    }
    return channel;
  }

  private async openChannel(gatewayId: string): Promise<Channel> {
    const name = gatewayCommandQueue(gatewayId);
    const queue = new Queue(name, { connection: this.redis, prefix: this.keys.bullPrefix });
    // start reading the queue's event stream from its current end, so no reply sent from now on is missed
    const last = await this.redis.xrevrange(queue.keys.events, '+', '-', 'COUNT', 1);
    const eventsConnection = createRedis(this.config.REDIS_URL);
    const events = new QueueEvents(name, {
      connection: eventsConnection,
      prefix: this.keys.bullPrefix,
      lastEventId: last[0]?.[0] ?? '0-0',
    });
    events.on('error', (err) => this.logger.warn(`command reply stream of ${gatewayId}: ${String(err)}`));
    await events.waitUntilReady();
    return { queue, events, eventsConnection };
  }

  async onModuleDestroy(): Promise<void> {
    const channels = await Promise.allSettled([...this.channels.values()]);
    this.channels.clear();
    for (const c of channels) {
      if (c.status !== 'fulfilled') continue;
      await c.value.events.close().catch(() => undefined);
      c.value.eventsConnection.disconnect();
      await c.value.queue.close().catch(() => undefined);
    }
  }
}
