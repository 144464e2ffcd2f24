import { Job, Queue, QueueEvents, Worker } from 'bullmq';
import { CommandMap, CommandName, CommandReply, CommandRequest, DomainError, gatewayCommandQueue } from '@app/contracts';
import { createRedis, Redis, RedisKeys } from '@app/redis';
import type { FleetLogger } from './fleet-logger';

/*
 * The command protocol between API replicas and gateway nodes. Each gateway drains its own BullMQ queue
 * (`gatewayCommandQueue(gatewayId)` under RedisKeys.bullPrefix); a request carries a deadline, the job's return value
 * is the reply. Both sides live in this file so the queue's name and options and the meaning of the deadline are
 * written once.
 */

export interface CommandBusOptions {
  redisUrl: string;
  /** how long `send` waits for a reply; also the request's deadline */
  timeoutMs: number;
}

interface Channel {
  queue: Queue;
  events: QueueEvents;
  /** QueueEvents blocks on its connection, so each channel has its own; BullMQ leaves a handed-in one open */
  eventsConnection: Redis;
}

/**
 * The sending side: adds a command to one gateway's queue and waits for the reply.
 * No reply within the timeout is 503 gateway_unavailable: the job is removed if still waiting, and the gateway
 * refuses it anyway once its deadline has passed, so a late gateway never acts on a request already answered.
 */
export class CommandBus {
  private readonly channels = new Map<string, Promise<Channel>>();

  constructor(
    private readonly options: CommandBusOptions,
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly logger: FleetLogger,
    private readonly clock: () => number = Date.now,
  ) {}

  async send<N extends CommandName>(gatewayId: string, name: N, args: CommandMap[N]['args']): Promise<CommandMap[N]['result']> {
    const timeout = this.options.timeoutMs;
    const request: CommandRequest<N> = { name, args, deadline: this.clock() + timeout };
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
      this.logger.warn(
        { gatewayId, command: name },
        `gateway ${gatewayId} did not answer ${name} in ${timeout} ms: ${String((err as Error)?.message ?? err)}`,
      );
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
    // the shared connection's errors (a Redis restart) are its owner's to log; unheard, BullMQ prints each to stderr
    queue.on('error', () => undefined);
    // start reading the queue's event stream from its current end, so no reply sent from now on is missed
    const last = await this.redis.xrevrange(queue.keys.events, '+', '-', 'COUNT', 1);
    const eventsConnection = createRedis(this.options.redisUrl);
    const events = new QueueEvents(name, {
      connection: eventsConnection,
      prefix: this.keys.bullPrefix,
      lastEventId: last[0]?.[0] ?? '0-0',
    });
    events.on('error', (err) => this.logger.warn({ gatewayId }, `command reply stream of ${gatewayId}: ${String(err)}`));
    // every command waiting for its reply listens for its queue's `closing` (BullMQ's waitUntilFinished): a burst of
    // nudges (a supervisor pass, a drain) is many listeners at once by design, not a leak
    queue.setMaxListeners(0);
    await events.waitUntilReady();
    return { queue, events, eventsConnection };
  }

  /** Closes every channel; the shared Redis client handed in stays open (its owner closes it). */
  async close(): Promise<void> {
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

/** What runs the commands on a gateway (its SessionHost). */
export interface CommandExecutor {
  execute<N extends CommandName>(request: CommandRequest<N>): Promise<CommandMap[N]['result']>;
}

/**
 * Runs one command and turns the outcome into a reply. A command past its deadline is not executed:
 * the API has already answered 503, and acting late would surprise the caller.
 */
export async function runCommand(
  executor: CommandExecutor,
  request: CommandRequest,
  clock: () => number = Date.now,
  onUnexpected: (err: unknown) => void = () => undefined,
): Promise<CommandReply> {
  if (clock() > request.deadline) {
    return { ok: false, error: { code: 'gateway_unavailable', message: 'command expired before the gateway picked it up', details: {} } };
  }
  try {
    return { ok: true, result: await executor.execute(request) };
  } catch (err) {
    if (err instanceof DomainError) return { ok: false, error: { code: err.code, message: err.message, details: err.details } };
    onUnexpected(err);
    return { ok: false, error: { code: 'internal', message: 'the gateway failed to run the command', details: {} } };
  }
}

export interface CommandServerOptions {
  redisUrl: string;
  gatewayId: string;
  /** commands run at once on this gateway */
  concurrency: number;
}

/** The serving side: drains this gateway's own command queue; the job's return value is the reply the API waits for. */
export class CommandServer {
  private worker: Worker | null = null;
  private connection: Redis | null = null;

  constructor(
    private readonly options: CommandServerOptions,
    private readonly keys: RedisKeys,
    private readonly executor: CommandExecutor,
    private readonly logger: FleetLogger,
    private readonly onCommand: (name: string, outcome: string) => void = () => undefined,
    private readonly clock: () => number = Date.now,
  ) {}

  async start(): Promise<void> {
    this.worker = new Worker(
      gatewayCommandQueue(this.options.gatewayId),
      async (job: Job<CommandRequest>) => {
        const reply = await runCommand(this.executor, job.data, this.clock, (err) =>
          this.logger.error({ command: job.data.name, err: String(err) }, 'command failed'),
        );
        this.onCommand(job.data.name, reply.ok ? 'ok' : reply.error.code);
        return reply;
      },
      { connection: (this.connection = createRedis(this.options.redisUrl)), prefix: this.keys.bullPrefix, concurrency: this.options.concurrency },
    );
    this.worker.on('error', (err) => this.logger.error({ err: String(err) }, 'command worker error'));
    await this.worker.waitUntilReady();
  }

  async close(): Promise<void> {
    await this.worker?.close();
    this.worker = null;
    // BullMQ leaves a connection it was handed open
    await this.connection?.quit().catch(() => this.connection?.disconnect());
    this.connection = null;
  }
}
