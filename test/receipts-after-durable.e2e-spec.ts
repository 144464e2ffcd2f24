import { bootWebhookedFleet, isolateFleet, SimFleet, WebhookedFleet } from './support/fleet-harness';

const db = isolateFleet('receipts');

import { checkedRequest as request } from './support/api-app';
import { waitFor } from './support/processes';
import { bearer, testDataSource } from './support/seed';
import { TcpOutage } from './support/tcp-outage';

jest.setTimeout(180_000);

const CONTACT = '15557780000@s.whatsapp.net';

/**
 * Receipts after durable (docs/baileys-engine.md): WhatsApp forgets a message once the device's receipt for it
 * arrives, and Baileys sends that receipt before it hands the message over. The engine holds each receipt until the
 * message's events are in the inbound spool in Redis or stored. Here a gateway stops hearing from Redis (a frozen
 * relay: its writes hang), a contact writes, and the gateway is SIGKILLed while it holds the message: WhatsApp must
 * still have it, and the next gateway stores and announces it once.
 *
 * Baileys only, against the WhatsApp Web emulator: the simulator's own protocol acknowledges after the commit by design
 * (sim-connection.ts), and test/inbound-ack.e2e-spec.ts kills its gateways mid-burst.
 */
describe('Receipts after durable: a gateway killed while it holds a message it could not make durable loses nothing (Baileys)', () => {
  const fleet = new SimFleet({ REBALANCE_MOVES_PER_MIN: '0', GATEWAY_ADOPT_INTERVAL_MS: '250', SUPERVISOR_INTERVAL_MS: '250' }, 'baileys');
  const redis = new URL(process.env.REDIS_URL!);
  const relay = new TcpOutage(() => ({ host: redis.hostname, port: Number(redis.port || 6379) }));
  let world: WebhookedFleet;
  const api = () => request(world.app.getHttpServer());

  beforeAll(async () => {
    await relay.start();
    world = await bootWebhookedFleet(db, fleet, [], 'Receipts Inc');
  });

  afterAll(async () => {
    await world?.close();
    relay.thaw();
    await relay.cut();
  });

  /** The webhook deliveries of message.received for this WhatsApp id: event ids and request ids. */
  const announced = (waMessageId: string) => {
    const events = new Set<string>();
    for (const r of world.receiver.at('/hooks')) {
      const body = JSON.parse(r.rawBody.toString());
      if (body.event === 'message.received' && body.payload?.message?.waMessageId === waMessageId) events.add(body.id);
    }
    return events;
  };
  const inbound = async (sessionId: string, text: string): Promise<string> => {
    const res = await fleet.simPost(`/sim/sessions/${sessionId}/inbound`, { from: CONTACT, text });
    if (typeof res.id !== 'string') throw new Error(`the emulator refused the message: ${JSON.stringify(res)}`);
    return res.id;
  };

  it('the held message stays with WhatsApp, reaches the next gateway, and is announced once', async () => {
    // the holder reaches Redis through the relay; the heir directly
    const relayed = new URL(redis);
    relayed.hostname = '127.0.0.1';
    relayed.port = String(relay.port);
    const holder = await fleet.startGateway('gw-holder', { REDIS_URL: relayed.toString() });
    const created = await api().post('/api/v1/sessions').set(bearer(world.org.adminKey)).send({ label: 'receipts' });
    expect(created.status).toBe(201);
    const sessionId: string = created.body.id;
    expect(created.body.gatewayId).toBe('gw-holder');
    await fleet.pair([sessionId], { api, token: world.org.adminKey });
    const pg = await testDataSource();
    const session = async () => (await pg.query(`SELECT gateway_id, status, last_connected_at FROM sessions WHERE id = $1`, [sessionId]))[0];
    await waitFor(async () => (await session()).status === 'working', 60_000, 'the session working on gw-holder');
    await fleet.startGateway('gw-heir');

    // a first message goes through as usual (and opens the contact's Signal session with this device)
    const first = await inbound(sessionId, 'before the freeze');
    await waitFor(() => announced(first).size > 0, 30_000, 'the first message at the webhook');

    // Redis stops answering the holder; the contact writes again
    relay.freeze();
    const held = await inbound(sessionId, 'while Redis is away');
    // the holder decrypted it and holds its receipt (before the fix: the receipt reached WhatsApp at once)
    const holding = async () => {
      const metrics = await (await fetch(`${holder.opsUrl}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      return Number(/^\w*gateway_receipts_held(?:\{[^}]*\})? (\d+)$/m.exec(metrics)?.[1] ?? 0);
    };
    const device = async () => fleet.simGet(`/sim/sessions/${sessionId}`);
    const seen = await waitFor(
      async () => ((await device()).pendingInbound === 0 ? 'acknowledged' : (await holding()) > 0 ? 'held' : null),
      30_000,
      'the holder to take the message',
    );
    console.log(`receipts after durable: the holder had the message (${seen}) when it was killed`);
    const killedAt = new Date();
    await holder.proc.kill();
    // WhatsApp still has it
    expect((await device()).pendingInbound).toBeGreaterThan(0);

    // the heir takes the session over; WhatsApp delivers the message again (the heir's Signal state is the holder's,
    // committed after the decrypt: Baileys asks the contact to send it again, with a retry receipt)
    await waitFor(async () => {
      const s = await session();
      return s.gateway_id === 'gw-heir' && s.status === 'working' && s.last_connected_at >= killedAt;
    }, 60_000, 'the session working on gw-heir');
    await waitFor(() => announced(held).size > 0, 60_000, 'the held message at the webhook');
    // stored and announced once, and WhatsApp has nothing left for the device
    await waitFor(async () => (await device()).pendingInbound === 0, 30_000, 'the network to have nothing pending');
    expect(Number((await pg.query(`SELECT count(*) AS n FROM messages WHERE session_id = $1 AND wa_message_id = $2`, [sessionId, held]))[0].n)).toBe(1);
    expect(announced(held).size).toBe(1);
    expect(announced(first).size).toBe(1);
  });
});
