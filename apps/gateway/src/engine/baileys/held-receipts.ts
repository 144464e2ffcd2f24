import type { Logger } from 'pino';
import type { WAMessage } from '@whiskeysockets/baileys';
import { describe } from './connection-errors';

/** Counts the receipts held on this gateway (the gateway backs it with its metrics registry). */
export interface HeldReceiptsMetrics {
  changed(delta: number): void;
}

/**
 * The delivery receipts of one Baileys connection, held until what their message became is durable
 * (docs/baileys-engine.md, "Receipts after durable").
 *
 * WhatsApp forgets a message once the device's receipt for it arrives, and Baileys sends that receipt before it emits
 * the message. Baileys (patched: `holdReceipt`) hands each decrypted message's receipt here instead; the connection
 * releases it with the promise that the message's events are durable (in the inbound spool in Redis, or taken by the
 * gateway), and it is sent then. A receipt still held when the socket closes is never sent: WhatsApp keeps the message
 * and delivers it again on the session's next connect, on this gateway or the next.
 */
export class HeldReceipts {
  /** by message id: what Baileys handed over and the connection has not released yet */
  private readonly held = new Map<string, Array<() => Promise<void>>>();
  /** held or released and waiting for durability, not sent or dropped yet */
  private counted = 0;
  private closed = false;

  constructor(private readonly deps: { logger: Logger; metrics?: HeldReceiptsMetrics }) {}

  /** Baileys' `holdReceipt`: the receipt of `msg`, to send once it is released and durable. */
  hold(msg: WAMessage, send: () => Promise<void>): void {
    const id = msg.key.id;
    // nothing to key it by, or nobody left to release it: sent as Baileys would have
    if (!id || this.closed) return void this.send(send);
    this.held.set(id, [...(this.held.get(id) ?? []), send]);
    this.count(1);
  }

  /** Every receipt held for this message goes once `durable` resolves (it never rejects), unless the socket closed first. */
  release(msg: WAMessage, durable: Promise<unknown>): void {
    const id = msg.key.id;
    const sends = id ? this.held.get(id) : undefined;
    if (!sends) return;
    this.held.delete(id!);
    void durable.then(() => {
      if (this.closed) return;
      this.count(-sends.length);
      for (const send of sends) void this.send(send);
    });
  }

  /** The socket closed: nothing held is sent (WhatsApp delivers those messages again). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.held.clear();
    this.count(-this.counted);
  }

  private async send(send: () => Promise<void>): Promise<void> {
    try {
      await send();
    } catch (err) {
      // a socket that closed meanwhile: WhatsApp delivers the message again, and the duplicate is dropped by its id
      this.deps.logger.debug({ err: describe(err) }, 'a delivery receipt could not be sent');
    }
  }

  private count(delta: number): void {
    if (delta === 0) return;
    this.counted += delta;
    this.deps.metrics?.changed(delta);
  }
}
