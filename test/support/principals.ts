import { PrincipalChange } from '@app/contracts';
import { PrincipalChanges } from '@app/events';
import { createRedis, RedisKeys } from '@app/redis';

/**
 * What every writer of keys and users does after its commit (the admin CLI does it itself): tells the API
 * replicas, whose principal caches and open sockets depend on hearing it.
 */
export async function announcePrincipalChange(change: PrincipalChange): Promise<void> {
  const redis = createRedis(process.env.REDIS_URL!);
  try {
    await new PrincipalChanges(redis, new RedisKeys(process.env.REDIS_KEY_PREFIX!)).announce(change);
  } finally {
    redis.disconnect();
  }
}
