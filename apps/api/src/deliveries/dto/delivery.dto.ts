import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { DELIVERY_STATUSES, DeliveryStatus } from '@app/contracts';
import { PageQueryDto } from '../../common/pagination';

export class ListDeliveriesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional() @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;
}

export class DeliveryResponse {
  @ApiProperty({ example: 'dlv_01JD…' }) id: string;
  @ApiProperty() webhookId: string;
  @ApiProperty({ description: 'the event id, sent as X-Webhook-Request-Id' }) eventId: string;
  @ApiProperty({ example: 'message.received' }) event: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: DeliveryStatus;
  @ApiProperty({ type: 'integer', description: 'attempts made so far (replays continue the count)' }) attempts: number;
  @ApiProperty({ type: 'integer', nullable: true }) lastStatusCode: number | null;
  @ApiProperty({ type: String, nullable: true }) lastError: string | null;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) createdAt: number;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) updatedAt: number;
  @ApiProperty({ type: 'integer', format: 'int64', nullable: true, description: 'epoch ms' }) deliveredAt: number | null;
  @ApiProperty({ type: 'integer', format: 'int64', nullable: true, description: 'epoch ms; when pending, the next attempt' }) nextAttemptAt: number | null;
}

export class DeliveryAttemptResponse {
  @ApiProperty({ type: 'integer' }) attemptNo: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'null when no HTTP answer came' }) statusCode: number | null;
  @ApiProperty({ type: 'integer' }) durationMs: number;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'first 4 KiB of the answer' }) responseSnippet: string | null;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) startedAt: number;
}

export class DeliveryDetailResponse extends DeliveryResponse {
  @ApiProperty({ type: [DeliveryAttemptResponse] }) attemptList: DeliveryAttemptResponse[];
}

export class DeliveryPage {
  @ApiProperty({ type: [DeliveryResponse] }) data: DeliveryResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class WebhookTestResponse {
  @ApiProperty({ description: 'id of the webhook.test event' }) eventId: string;
  @ApiPropertyOptional({ description: 'the delivery carrying it to this webhook' }) deliveryId?: string;
}
