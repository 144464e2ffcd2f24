/*
 * The lease keeper thread (LeaseKeeper starts it): renews the node's registry entry and lease epoch on a Redis
 * connection of its own, so neither waits for the engine's work on the main thread. Reports each tick to the main
 * thread; the facts that must not wait for a message (the last renewal, the epoch) are in the shared slots.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { GatewayRegistry, NodeLease } from '@app/fleet';
import { createRedis, RedisKeys } from '@app/redis';
import { KEEPER_SLOTS, LeaseKeeperLoop, sharedKeeperState } from './lease-keeper-loop';
import type { KeeperWorkerData, ToKeeper } from './lease-keeper';

const data = workerData as KeeperWorkerData;
const state = sharedKeeperState(data.buffer);
const redis = createRedis(data.redisUrl, { connectionName: `${data.node.id}:lease-keeper` });
redis.on('error', () => undefined);
const keys = new RedisKeys(data.prefix);
let waWebVersion: string | null = null;
const registry = new GatewayRegistry(redis, keys, { ...data.node, waWebVersion: () => waWebVersion }, data.ttlMs);
const loop = new LeaseKeeperLoop(state, registry, new NodeLease(redis, keys, data.node.id, data.ttlMs), { mainStallMs: data.mainStallMs });

let running: Promise<void> | null = null;
const tick = (): Promise<void> =>
  (running ??= loop
    .tick()
    .then((report) => parentPort?.postMessage(report))
    .finally(() => (running = null)));

const timer = setInterval(() => void tick(), data.heartbeatMs);
parentPort?.on('message', (message: ToKeeper) => {
  if (message.kind === 'tick') void tick();
  else if (message.kind === 'info') waWebVersion = message.waWebVersion;
  else if (message.kind === 'draining') void registry.startDraining(state.load(KEEPER_SLOTS.sessionCount)).catch(() => undefined);
  else if (message.kind === 'stop') {
    clearInterval(timer);
    void Promise.resolve(running)
      .then(() => redis.quit())
      .catch(() => redis.disconnect())
      .finally(() => parentPort?.close());
  }
});
void tick();
