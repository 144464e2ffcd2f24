import { Job, Worker } from 'bullmq';
import type { Logger } from 'pino';
import { CommandReply, CommandRequest, DomainError, gatewayCommandQueue } from '@app/contracts';
import { createRedis, RedisKeys } from '@app/redis';
import type { SessionHost } from '../sessions/session-host';

export type CommandExecutor = Pick<SessionHost, 'execute'>;

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

/** Drains this gateway's own command queue; the job's return value is the reply the API waits for. */
export class CommandWorker {
  private worker: Worker | null = null;
  private connection: ReturnType<typeof createRedis> | null = null;

  constructor(
    private readonly redisUrl: string,
    private readonly keys: RedisKeys,
    private readonly gatewayId: string,
    private readonly executor: CommandExecutor,
    private readonly concurrency: number,
    private readonly logger: Logger,
    private readonly onCommand: (name: string, outcome: string) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    this.worker = new Worker(
      gatewayCommandQueue(this.gatewayId),
      async (job: Job<CommandRequest>) => {
        const reply = await runCommand(this.executor, job.data, Date.now, (err) =>
          this.logger.error({ command: job.data.name, err: String(err) }, 'command failed'),
        );
        this.onCommand(job.data.name, reply.ok ? 'ok' : reply.error.code);
        return reply;
      },
      { connection: (this.connection = createRedis(this.redisUrl)), prefix: this.keys.bullPrefix, concurrency: this.concurrency },
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
