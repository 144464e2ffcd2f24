import type { Writable } from 'node:stream';
import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import { renderSinkTemplate, SINK_DEFAULTS } from '@app/contracts';
import type { DeliveryMessage, Destination } from '../delivery/destinations';
import type { PostResult } from '../delivery/webhook-client';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import { BrokerAddressGuard } from './broker-address';
import { BrokerLink, brokerOutcome, LinkPool, routeOf, withTimeout } from './link-pool';

export interface BrokerDestinationOptions {
  /** bounds the connect and each publish's confirm */
  timeoutMs: number;
  allowPrivateTargets: boolean;
}

/**
 * One connection and one confirm channel per sink. A publish is `mandatory`, so a message no queue is bound for comes
 * back (basic.return, before its confirm) and counts as a failure rather than vanishing; it is delivered only when
 * RabbitMQ acknowledged it (publisher confirm). Anything that closes the channel (the broker restarted, an exchange
 * that does not exist, a connection cut) fails every publish in flight and marks the link dead.
 */
class AmqpLink implements BrokerLink {
  dead = false;
  private readonly returned = new Set<string>();
  private readonly inflight = new Set<(err: Error) => void>();
  private readonly socket: Writable | null;
  private corked = false;

  constructor(
    private readonly connection: ChannelModel,
    private readonly channel: ConfirmChannel,
  ) {
    this.socket = socketOf(connection);
    const die = (err?: Error) => {
      if (this.dead) return;
      this.dead = true;
      const reason = err ?? new Error('connection closed');
      for (const fail of [...this.inflight]) fail(reason);
      this.inflight.clear();
      void this.close();
    };
    // an 'error' without a listener would crash the process
    connection.on('error', (err: Error) => die(err));
    connection.on('close', (err?: Error) => die(err ?? new Error('connection closed')));
    channel.on('error', (err: Error) => die(err));
    channel.on('close', () => die(new Error('channel closed')));
    channel.on('return', (msg: { properties: { messageId?: string } }) => {
      if (msg.properties.messageId) this.returned.add(msg.properties.messageId);
    });
  }

  publish(exchange: string, routingKey: string, message: DeliveryMessage): Promise<void> {
    if (this.dead) return Promise.reject(new Error('connection closed'));
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        this.inflight.delete(fail);
        reject(err);
      };
      this.inflight.add(fail);
      try {
        this.channel.publish(
          exchange,
          routingKey,
          message.body,
          {
            messageId: message.eventId,
            contentType: 'application/json',
            persistent: true,
            mandatory: true,
            type: message.eventType,
            timestamp: Math.floor(message.now / 1000),
            appId: 'whatsapp-gateway',
            headers: { 'wa-event': message.eventType, 'wa-organization-id': message.organizationId, 'wa-session-id': message.sessionId ?? '' },
          },
          (err: unknown) => {
            if (settled) return;
            settled = true;
            this.inflight.delete(fail);
            if (err) return reject(err instanceof Error ? err : new Error('nacked by the broker'));
            if (this.returned.delete(message.eventId)) return reject(new Error(`unroutable: no queue is bound to exchange "${exchange}" for routing key "${routingKey}"`));
            resolve();
          },
        );
        this.coalesce();
      } catch (err) {
        fail(err as Error);
      }
    });
  }

  /**
   * The publishes of this turn of the event loop leave in one socket write. amqplib writes each publish's frames with
   * a write of its own, from an immediate it schedules once the channel's buffer turned readable (a tick after the
   * publish); the socket stays corked until the immediate after that one.
   */
  private coalesce(): void {
    const socket = this.socket;
    if (this.corked || !socket) return;
    this.corked = true;
    socket.cork();
    process.nextTick(() =>
      setImmediate(() => {
        this.corked = false;
        socket.uncork();
      }),
    );
  }

  async close(): Promise<void> {
    this.dead = true;
    await this.connection.close().catch(() => undefined);
  }
}

/** RabbitMQ (AMQP 0-9-1): publish to the sink's exchange under its routing key, delivered once confirmed. */
export class AmqpDestination implements Destination {
  private readonly guard: BrokerAddressGuard;
  private readonly links: LinkPool<AmqpLink>;

  constructor(private readonly options: BrokerDestinationOptions) {
    this.guard = new BrokerAddressGuard(options.allowPrivateTargets);
    this.links = new LinkPool((url) => this.open(url));
  }

  async deliver(target: WebhookTarget, message: DeliveryMessage): Promise<PostResult> {
    const exchange = target.target.exchange ?? '';
    const routingKey = renderSinkTemplate(target.target.routingKey ?? SINK_DEFAULTS.routingKey, routeOf(message));
    return brokerOutcome(target.url, async () => {
      const link = await this.links.get(target.id, target.url);
      await withTimeout(link.publish(exchange, routingKey, message), this.options.timeoutMs);
      return null;
    });
  }

  close(): Promise<void> {
    return this.links.close();
  }

  private async open(url: string): Promise<AmqpLink> {
    const parsed = new URL(url);
    this.guard.assertHost(parsed.hostname);
    const connecting = connect(url, {
      timeout: this.options.timeoutMs,
      ...(this.guard.lookup ? { lookup: this.guard.lookup } : {}),
      clientProperties: { connection_name: 'webhook-dispatcher' },
    });
    const connection = await withTimeout(connecting, this.options.timeoutMs).catch((err) => {
      // a connection that opens after the timeout is closed, not leaked
      connecting.then(closeQuietly, () => undefined);
      throw err;
    });
    try {
      const channel = await connection.createConfirmChannel();
      return new AmqpLink(connection, channel);
    } catch (err) {
      await closeQuietly(connection);
      throw err;
    }
  }
}

/** The connection's socket (amqplib keeps it as `connection.stream`, not in its types); null if it is not there. */
function socketOf(model: ChannelModel): Writable | null {
  const stream = (model.connection as unknown as { stream?: Partial<Writable> }).stream;
  return typeof stream?.cork === 'function' && typeof stream.uncork === 'function' ? (stream as Writable) : null;
}

async function closeQuietly(connection: ChannelModel): Promise<void> {
  connection.on('error', () => undefined);
  await connection.close().catch(() => undefined);
}
