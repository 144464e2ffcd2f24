import { ApiProperty } from '@nestjs/swagger';
import type { SessionStatus } from '@app/contracts';

const EPOCH_MS = { type: 'integer', format: 'int64' } as const;

/** Every status, 0 when no session is in it. */
export class SessionStatusCounts implements Record<SessionStatus, number> {
  @ApiProperty({ type: 'integer' }) stopped: number;
  @ApiProperty({ type: 'integer' }) starting: number;
  @ApiProperty({ type: 'integer' }) scan_qr_code: number;
  @ApiProperty({ type: 'integer' }) working: number;
  @ApiProperty({ type: 'integer' }) reconnecting: number;
  @ApiProperty({ type: 'integer' }) failed: number;
  @ApiProperty({ type: 'integer' }) logged_out: number;
}

export class SessionCountsResponse {
  @ApiProperty({ type: 'integer', example: 3 }) total: number;
  @ApiProperty({ type: SessionStatusCounts, description: 'every status, 0 when no session is in it' }) byStatus: SessionStatusCounts;
}

export class MessageHourResponse {
  @ApiProperty({ ...EPOCH_MS, description: "the hour's start (epoch ms)" }) hour: number;
  @ApiProperty({ type: 'integer', description: 'inbound messages stored in that hour (history syncs left out)' }) received: number;
  @ApiProperty({ type: 'integer', description: 'outbound messages accepted in that hour' }) sent: number;
}

export class DeliveryHourResponse {
  @ApiProperty({ ...EPOCH_MS, description: "the hour's start (epoch ms)" }) hour: number;
  @ApiProperty({ type: 'integer', description: 'deliveries created in that hour and delivered' }) delivered: number;
  @ApiProperty({ type: 'integer', description: 'deliveries created in that hour that are `dead`, or waiting for a retry after a failed attempt' }) failed: number;
  @ApiProperty({ type: 'integer', nullable: true, description: "95th percentile of the delivered ones' latency (event stored → the receiver's 2xx), ms; null without any" })
  p95LatencyMs: number | null;
}

export class FailingWebhookResponse {
  @ApiProperty({ example: 'whk_01JD3Z8Q5W7N2K4M6P8R0T2V4X' }) id: string;
  @ApiProperty({ example: 'https://example.com/hooks/whatsapp' }) url: string;
  @ApiProperty({ ...EPOCH_MS, nullable: true, description: 'its receiver has failed since then (epoch ms); null once the breaker disabled it and a success cleared it' })
  failingSince: number | null;
  @ApiProperty({ ...EPOCH_MS, nullable: true, description: 'the breaker switched it off then (epoch ms): re-enable it to resume' }) disabledAt: number | null;
  @ApiProperty({ type: String, nullable: true, example: 'HTTP 503', description: 'the newest failed delivery’s error; null when none of its recent deliveries failed' })
  lastError: string | null;
  @ApiProperty({ type: 'integer', nullable: true, example: 503 }) lastStatusCode: number | null;
  @ApiProperty({ ...EPOCH_MS, nullable: true, description: 'when that delivery was last tried (epoch ms)' }) lastFailedAt: number | null;
}

export class OverviewResponse {
  @ApiProperty({ ...EPOCH_MS, description: 'when these figures were read (epoch ms)' }) generatedAt: number;
  @ApiProperty({ type: SessionCountsResponse }) sessions: SessionCountsResponse;
  @ApiProperty({ type: [MessageHourResponse], description: 'the last 24 hours, oldest first, one entry per hour (the last one is the current, partial hour)' })
  messages: MessageHourResponse[];
  @ApiProperty({
    type: [DeliveryHourResponse],
    nullable: true,
    description: 'webhook deliveries over the same 24 hours; null for a caller without `webhooks:manage`',
  })
  deliveries: DeliveryHourResponse[] | null;
  @ApiProperty({ type: [FailingWebhookResponse], nullable: true, description: 'the webhooks failing now, longest failing first; null for a caller without `webhooks:manage`' })
  failingWebhooks: FailingWebhookResponse[] | null;
}
