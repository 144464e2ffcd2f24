import type { Redis } from 'ioredis';
import type { RedisKeys } from '@app/redis';
import type { ChannelSubscriber } from './send-signal';

/**
 * Tells the gateway that holds a campaign's session that the campaign changed (created, paused, resumed, cancelled):
 * its scheduler takes the change at once (a pause stops the message it is about to send). Only a nudge, as SendSignal:
 * the campaign's row is the truth, and the scheduler reads it on its next tick. One channel per gateway; the message
 * is `<sessionId> <campaignId>`.
 */
export class CampaignSignal {
  constructor(private readonly keys: RedisKeys) {}

  private channel(gatewayId: string): string {
    return this.keys.key(`campaigns:${gatewayId}`);
  }

  async notify(redis: Redis, gatewayId: string, sessionId: string, campaignId: string): Promise<void> {
    await redis.publish(this.channel(gatewayId), `${sessionId} ${campaignId}`);
  }

  listen(signals: ChannelSubscriber, gatewayId: string, onCampaign: (sessionId: string, campaignId: string) => void): Promise<() => Promise<void>> {
    return signals.subscribe(this.channel(gatewayId), (message) => {
      const [sessionId, campaignId] = message.split(' ');
      if (sessionId && campaignId) onCampaign(sessionId, campaignId);
    });
  }
}
