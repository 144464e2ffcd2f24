import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient, type JetStreamPublishOptions, type PubAck } from '@nats-io/jetstream';
import { renderSinkTemplate, SINK_DEFAULTS } from '@app/contracts';
import type { DeliveryMessage, Destination } from '../delivery/destinations';
import type { PostResult } from '../delivery/webhook-client';
import type { WebhookTarget } from '../webhooks/webhook-directory';
import type { BrokerDestinationOptions } from './amqp-destination';
import { BrokerAddressGuard } from './broker-address';
import { BrokerLink, brokerOutcome, LinkPool, routeOf, withTimeout } from './link-pool';

/**
 * One NATS connection per sink, without the client's own reconnects (an attempt that finds its link dead opens a new
 * one; the retry schedule and the breaker pace that) and without the cluster's gossiped addresses (only the address
 * the guard checked is dialled).
 *
 * Publishes asked for during one turn of the event loop are made together at its end: the client buffers what is
 * published synchronously and writes it to the socket in one write, where publishes started one by one from their
 * attempts' own continuations (each after a slot was freed by an acknowledgement) cost a write each, in this process
 * and in the server.
 */
class NatsLink implements BrokerLink {
  dead = false;
  private readonly js: JetStreamClient;
  private queued: (() => void)[] = [];

  constructor(private readonly nc: NatsConnection) {
    this.js = jetstream(nc);
    void nc.closed().then(() => (this.dead = true), () => (this.dead = true));
  }

  publish(subject: string, body: Uint8Array, options: Partial<JetStreamPublishOptions>): Promise<PubAck> {
    return new Promise((resolve, reject) => {
      this.queued.push(() => this.js.publish(subject, body, options).then(resolve, reject));
      if (this.queued.length === 1) setImmediate(() => this.publishQueued());
    });
  }

  private publishQueued(): void {
    const queued = this.queued;
    this.queued = [];
    for (const start of queued) start();
  }

  async close(): Promise<void> {
    this.dead = true;
    await this.nc.close().catch(() => undefined);
  }
}

/**
 * NATS JetStream: publish to the sink's subject with `Nats-Msg-Id` = the event id (the stream's duplicate window drops
 * a redelivery), delivered once the stream acknowledged it.
 */
export class NatsDestination implements Destination {
  private readonly guard: BrokerAddressGuard;
  private readonly links: LinkPool<NatsLink>;

  constructor(private readonly options: BrokerDestinationOptions) {
    this.guard = new BrokerAddressGuard(options.allowPrivateTargets);
    this.links = new LinkPool((url) => this.open(url));
  }

  async deliver(target: WebhookTarget, message: DeliveryMessage): Promise<PostResult> {
    const subject = renderSinkTemplate(target.target.subject ?? SINK_DEFAULTS.subject, routeOf(message));
    return brokerOutcome(target.url, async () => {
      const link = await this.links.get(target.id, target.url);
      const h = natsHeaders();
      h.set('Content-Type', 'application/json');
      h.set('Wa-Event', message.eventType);
      h.set('Wa-Organization-Id', message.organizationId);
      if (message.sessionId) h.set('Wa-Session-Id', message.sessionId);
      const ack = await withTimeout(link.publish(subject, message.body, { msgID: message.eventId, headers: h, timeout: this.options.timeoutMs }), this.options.timeoutMs + 500);
      return `stream ${ack.stream} seq ${ack.seq}${ack.duplicate ? ' (duplicate)' : ''}`;
    });
  }

  close(): Promise<void> {
    return this.links.close();
  }

  private async open(url: string): Promise<NatsLink> {
    const u = new URL(url);
    const tls = u.protocol === 'tls:';
    const port = u.port || '4222';
    // plain connections dial the checked address; TLS keeps the name (its certificate names it), checked just before
    const address = await this.guard.resolve(u.hostname);
    const host = tls ? u.hostname : address.includes(':') ? `[${address}]` : address;
    const user = decodeURIComponent(u.username);
    const pass = decodeURIComponent(u.password);
    const connecting = connect({
      servers: `${host}:${port}`,
      name: 'webhook-dispatcher',
      timeout: this.options.timeoutMs,
      reconnect: false,
      ignoreClusterUpdates: true,
      // no Error built per request to keep its caller's stack for a failure (the dispatcher logs the message only)
      noAsyncTraces: true,
      ...(tls ? { tls: {} } : {}),
      // a URL with a user and no password carries a token
      ...(user && pass ? { user, pass } : user ? { token: user } : {}),
    });
    const nc = await withTimeout(connecting, this.options.timeoutMs + 500).catch((err) => {
      connecting.then((late) => late.close().catch(() => undefined), () => undefined);
      throw err;
    });
    return new NatsLink(nc);
  }
}
