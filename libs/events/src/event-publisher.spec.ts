import type { Db } from '@app/database';
import type { Redis } from 'ioredis';
import type { EventType } from '@app/contracts';
import { EventPublisher } from './event-publisher';

/**
 * The catalog (`EventPayloads`) is checked where events are produced. The `@ts-expect-error` lines are the test: the
 * typecheck (`tsc -p tsconfig.json --noEmit`) fails if a payload the catalog does not describe ever compiles again.
 */
describe('EventPublisher: payloads as the catalog describes them', () => {
  // build touches neither the database nor Redis; the stream defines its append script at construction
  const fake: Record<string, unknown> = { defineCommand: (name: string) => void (fake[name] = async () => null) };
  const redis = fake as unknown as Redis;
  const publisher = new EventPublisher({} as Db, redis, 'test', () => 1_000);

  it('types the envelope’s payload by its event type', () => {
    const envelope = publisher.build({ event: 'auth.qr', organizationId: 'org_1', sessionId: 'ses_1', payload: { qr: '2@abc', expiresAt: 21_000 } });
    const expiresAt: number = envelope.payload.expiresAt;
    expect(envelope).toMatchObject({ event: 'auth.qr', organizationId: 'org_1', sessionId: 'ses_1', timestamp: 1_000, payload: { qr: '2@abc', expiresAt } });
  });

  it('refuses a payload that is not the one of its type', () => {
    const wrongShape = () =>
      publisher.build({
        event: 'session.status',
        organizationId: 'org_1',
        sessionId: 'ses_1',
        // @ts-expect-error: session.status carries status, previousStatus and reason, not a message
        payload: { message: 'hi' },
      });
    const anotherTypes = () =>
      // @ts-expect-error: the payload of auth.qr is not one of message.received
      publisher.build({ event: 'message.received', organizationId: 'org_1', sessionId: null, payload: { qr: '2@abc', expiresAt: 1 } });
    // a type only known at run time needs a payload valid for whichever type it is
    const unknownType = (event: EventType) =>
      // @ts-expect-error: an auth.qr payload is not valid for every event type
      publisher.build({ event, organizationId: 'org_1', sessionId: null, payload: { qr: '2@abc', expiresAt: 1 } });
    const viaTransact = () =>
      publisher.transact(async (_tx, publish) =>
        // @ts-expect-error: webhook.test names its webhook
        publish({ event: 'webhook.test', organizationId: 'org_1', sessionId: null, payload: { label: 'x' } }),
      );
    const viaOutbox = () =>
      // @ts-expect-error: message.ack carries the ack's status
      publisher.withOutbox([{ event: 'message.ack', organizationId: 'org_1', sessionId: null, payload: { messageId: 'msg_1', waMessageId: 'W', chatJid: 'c' } }], async () => false);
    // the envelopes are built at run time all the same: the check is the compiler's
    expect(wrongShape().payload).toEqual({ message: 'hi' });
    expect(anotherTypes().event).toBe('message.received');
    expect(unknownType('poll.vote').event).toBe('poll.vote');
    expect([viaTransact, viaOutbox]).toHaveLength(2);
  });
});
