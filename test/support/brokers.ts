import { ChildProcess, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as amqpConnect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { connect as natsConnect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { freePort, waitFor } from './processes';
import { spawnRegistered } from './process-registry';

/** The shared RabbitMQ and NATS every machine starts (CONTRACT 15's tests; names unique per run, deleted after). */
export const RABBITMQ = { host: '127.0.0.1', port: 5672, user: 'guest', pass: 'guest' };
export const NATS_URL = '127.0.0.1:4222';

/** A topic exchange with one queue bound to every key; consumed into `messages`. `drop` deletes both. */
export async function rabbitTap(name: string, port = RABBITMQ.port): Promise<{
  exchange: string;
  messages: ConsumeMessage[];
  drop(): Promise<void>;
}> {
  const conn: ChannelModel = await amqpConnect(`amqp://${RABBITMQ.user}:${RABBITMQ.pass}@${RABBITMQ.host}:${port}`);
  conn.on('error', () => undefined);
  const ch: Channel = await conn.createChannel();
  const exchange = name;
  await ch.assertExchange(exchange, 'topic', { durable: true });
  const q = await ch.assertQueue(`${name}.q`, { durable: true });
  await ch.bindQueue(q.queue, exchange, '#');
  const messages: ConsumeMessage[] = [];
  await ch.consume(q.queue, (m) => m && messages.push(m), { noAck: true });
  return {
    exchange,
    messages,
    drop: async () => {
      await ch.deleteQueue(q.queue).catch(() => undefined);
      await ch.deleteExchange(exchange).catch(() => undefined);
      await conn.close().catch(() => undefined);
    },
  };
}

/** A JetStream stream over `<subjectRoot>.>`; `ids()` lists the Nats-Msg-Id of every message it stored. */
export async function jetStreamTap(server: string, stream: string, subjectRoot: string): Promise<{
  ids(): Promise<string[]>;
  bodies(): Promise<{ id: string; subject: string; body: string }[]>;
  drop(): Promise<void>;
  close(): Promise<void>;
}> {
  let nc: NatsConnection = await natsConnect({ servers: server, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  let jsm: JetStreamManager = await jetstreamManager(nc);
  await jsm.streams.add({ name: stream, subjects: [`${subjectRoot}.>`], duplicate_window: 120_000_000_000 });
  const bodies = async () => {
    const info = await jsm.streams.info(stream);
    const out: { id: string; subject: string; body: string }[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (m) out.push({ id: m.header?.get('Nats-Msg-Id') ?? '', subject: m.subject, body: new TextDecoder().decode(m.data) });
    }
    return out;
  };
  return {
    bodies,
    ids: async () => (await bodies()).map((b) => b.id),
    drop: async () => {
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close().catch(() => undefined);
    },
    close: async () => {
      await nc.close().catch(() => undefined);
      nc = await natsConnect({ servers: server });
      jsm = await jetstreamManager(nc);
    },
  };
}

export { jetstream };

/** `nats-server` on this machine, or null (the outage case then runs against the shared server without the kill). */
export function natsServerBinary(): string | null {
  try {
    return execFileSync('which', ['nats-server']).toString().trim() || null;
  } catch {
    return null;
  }
}

/** A private nats-server with JetStream on a free port and a temporary store, which a test can kill and restart. */
export class PrivateNats {
  private child: ChildProcess | null = null;
  readonly storeDir = mkdtempSync(join(tmpdir(), 'sinks-nats-'));
  port = 0;

  constructor(private readonly binary: string) {}

  get url(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.port) this.port = await freePort();
    this.child = spawnRegistered(this.binary, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir], { stdio: 'ignore' }, 'nats-server');
    await waitFor(async () => {
      try {
        const nc = await natsConnect({ servers: this.url, timeout: 500 });
        await (await jetstreamManager(nc)).getAccountInfo();
        await nc.close();
        return true;
      } catch {
        return false;
      }
    }, 15000, 'private nats-server');
  }

  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}
