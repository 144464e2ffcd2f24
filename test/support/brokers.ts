import { ChildProcess, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as amqpConnect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { connect as natsConnect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { freePort, waitFor } from './processes';
import { execFileRegistered, killGroup, spawnRegistered } from './process-registry';

/** The shared RabbitMQ and NATS every machine starts (CONTRACT 15's tests; names unique per run, deleted after). */
export const RABBITMQ = { host: '127.0.0.1', port: 5672, user: 'guest', pass: 'guest' };
export const NATS_URL = '127.0.0.1:4222';

/**
 * A topic exchange with one queue bound to every key; consumed into `messages`. `drop` deletes both. `reopen` connects
 * again and goes on consuming (after the broker restarted: the queue is durable, its persistent messages survive).
 */
export async function rabbitTap(name: string, port = RABBITMQ.port): Promise<{
  exchange: string;
  messages: ConsumeMessage[];
  reopen(): Promise<void>;
  drop(): Promise<void>;
}> {
  const exchange = name;
  const queue = `${name}.q`;
  const messages: ConsumeMessage[] = [];
  let conn: ChannelModel;
  let ch: Channel;
  const open = async () => {
    conn = await amqpConnect(`amqp://${RABBITMQ.user}:${RABBITMQ.pass}@${RABBITMQ.host}:${port}`);
    conn.on('error', () => undefined);
    ch = await conn.createChannel();
    ch.on('error', () => undefined);
    await ch.assertExchange(exchange, 'topic', { durable: true });
    await ch.assertQueue(queue, { durable: true });
    await ch.bindQueue(queue, exchange, '#');
    await ch.consume(queue, (m) => m && messages.push(m), { noAck: true });
  };
  await open();
  return {
    exchange,
    messages,
    reopen: async () => {
      await conn.close().catch(() => undefined);
      await open();
    },
    drop: async () => {
      await ch.deleteQueue(queue).catch(() => undefined);
      await ch.deleteExchange(exchange).catch(() => undefined);
      await conn.close().catch(() => undefined);
    },
  };
}

/** The folder of RabbitMQ's own scripts (rabbitmq-server, rabbitmqctl), or null when RabbitMQ is not installed here. */
export function rabbitmqBinDir(): string | null {
  const dir = process.env.RABBITMQ_BIN_DIR ?? '/usr/lib/rabbitmq/bin';
  return existsSync(join(dir, 'rabbitmq-server')) && existsSync(join(dir, 'rabbitmqctl')) ? dir : null;
}

/** a port the node could not bind (taken by another process after `freePort` picked it) */
const PORT_TAKEN = /already_used|eaddrinuse/i;

/**
 * A RabbitMQ node of the test's own (the shared one on 5672 may not be stopped): its own node name, AMQP and
 * distribution ports, database, logs, config (no plugins) and Erlang cookie (HOME), all in a temporary directory. It is
 * stopped and started through its service control, `rabbitmqctl -n <node> stop_app / start_app`, as an operator
 * restarts a broker: every connection is closed, the listener goes away, durable queues and persistent messages stay.
 */
export class PrivateRabbit {
  readonly dir = mkdtempSync(join(tmpdir(), 'sinks-rabbit-'));
  readonly node = `sinks${process.pid}x${Date.now().toString(36)}@localhost`;
  port = 0;
  private distPort = 0;
  private child: ChildProcess | null = null;
  private output = '';

  constructor(private readonly binDir: string) {}

  private env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      HOME: this.dir,
      RABBITMQ_NODENAME: this.node,
      RABBITMQ_DIST_PORT: String(this.distPort),
      RABBITMQ_MNESIA_BASE: join(this.dir, 'mnesia'),
      RABBITMQ_LOG_BASE: join(this.dir, 'log'),
      RABBITMQ_CONFIG_FILE: join(this.dir, 'rabbitmq.conf'),
      RABBITMQ_ENABLED_PLUGINS_FILE: join(this.dir, 'enabled_plugins'),
      RABBITMQ_PID_FILE: join(this.dir, 'rabbit.pid'),
    };
  }

  /**
   * Boots the node and waits until it takes AMQP connections (an Erlang boot: ~20 s on a loaded machine). A port taken
   * by another process between `freePort` and the node's bind (a busy shared machine) is retried on new ports.
   */
  async start(): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        return await this.boot();
      } catch (err) {
        const taken = PORT_TAKEN.test(this.bootLog());
        if (!taken || tries >= 3) throw err;
        // a node whose AMQP listener could not bind keeps running without it
        const child = this.child;
        if (child?.pid && child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((r) => child.once('exit', r));
          killGroup(child.pid);
          await exited;
        }
        for (const d of ['mnesia', 'log']) rmSync(join(this.dir, d), { recursive: true, force: true });
      }
    }
  }

  private async boot(): Promise<void> {
    this.output = '';
    this.port = await freePort();
    this.distPort = await freePort();
    writeFileSync(join(this.dir, 'rabbitmq.conf'), `listeners.tcp.local = 127.0.0.1:${this.port}\n`);
    writeFileSync(join(this.dir, 'enabled_plugins'), '[].\n');
    const child = spawnRegistered(join(this.binDir, 'rabbitmq-server'), [], { cwd: this.dir, env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] }, 'private rabbitmq-server');
    this.child = child;
    const keep = (d: Buffer) => (this.output = (this.output + d.toString()).slice(-20_000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    await this.serving(child);
  }

  /** `rabbitmqctl -n <node> stop_app`: the broker stops (connections closed, listener gone), the node stays. */
  async stopApp(): Promise<void> {
    await this.ctl('stop_app');
  }

  /** `rabbitmqctl -n <node> start_app`, then waits until AMQP connections are taken again. */
  async startApp(): Promise<void> {
    await this.ctl('start_app');
    await this.serving(this.child);
  }

  /** Stops the node (`rabbitmqctl stop`, its process group killed if that fails) and deletes its directory. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      await this.ctl('stop').catch(() => undefined);
      if (child.exitCode === null && child.signalCode === null && child.pid) killGroup(child.pid);
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** what the node printed, and its log file (a listener's bind error is only there) */
  private bootLog(): string {
    const file = join(this.dir, 'log', `${this.node}.log`);
    return this.output + (existsSync(file) ? readFileSync(file, 'utf8').slice(-50_000) : '');
  }

  private async ctl(command: string): Promise<void> {
    await execFileRegistered(join(this.binDir, 'rabbitmqctl'), ['-n', this.node, command], { env: this.env(), timeout: 120_000 });
  }

  private async serving(child: ChildProcess | null): Promise<void> {
    await waitFor(async () => {
      if (!child || child.exitCode !== null) throw new Error(`the private RabbitMQ exited:\n${this.output}`);
      // its AMQP listener could not bind: the node runs on without it
      if (PORT_TAKEN.test(this.bootLog())) throw new Error(`the private RabbitMQ could not bind its ports:\n${this.output}`);
      try {
        const conn = await amqpConnect(`amqp://${RABBITMQ.user}:${RABBITMQ.pass}@127.0.0.1:${this.port}`);
        conn.on('error', () => undefined);
        await conn.close();
        return true;
      } catch {
        return false;
      }
    }, 120_000, 'the private RabbitMQ');
  }
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
