import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDateString, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { AUDIT_ACTOR_TYPES, AUDIT_OUTCOMES, type AuditActorType, type AuditEntry, type AuditOutcome } from '@app/contracts';
import { PageQueryDto } from '../common/pagination';

export class AuditLogQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'the actor id (a user id, an API key id, or `cli`)' })
  @IsOptional() @IsString() @MaxLength(128)
  actor?: string;

  @ApiPropertyOptional({ example: 'apikey.create' })
  @IsOptional() @IsString() @Matches(/^[a-z_-]+\.[a-z_:-]+$/)
  action?: string;

  @ApiPropertyOptional({ example: 'apiKey' })
  @IsOptional() @IsString() @MaxLength(64)
  targetType?: string;

  @ApiPropertyOptional()
  @IsOptional() @IsString() @MaxLength(128)
  targetId?: string;

  @ApiPropertyOptional({ enum: AUDIT_OUTCOMES })
  @IsOptional() @IsIn(AUDIT_OUTCOMES)
  outcome?: AuditOutcome;

  @ApiPropertyOptional({ format: 'date-time', description: 'entries at or after' })
  @IsOptional() @IsDateString({ strict: true })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'entries before' })
  @IsOptional() @IsDateString({ strict: true })
  to?: string;
}

class AuditActorResponse {
  @ApiProperty({ enum: AUDIT_ACTOR_TYPES }) type: AuditActorType;
  @ApiProperty({ type: String, nullable: true }) id: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'the user\'s email or the key\'s name when it acted' }) name: string | null;
}

class AuditTargetResponse {
  @ApiProperty({ type: String, nullable: true }) type: string | null;
  @ApiProperty({ type: String, nullable: true }) id: string | null;
}

export class AuditEntryResponse implements AuditEntry {
  @ApiProperty() id: string;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ type: AuditActorResponse }) actor: AuditActorResponse;
  @ApiProperty({ example: 'webhook.update' }) action: string;
  @ApiProperty({ type: AuditTargetResponse }) target: AuditTargetResponse;
  @ApiProperty({ enum: AUDIT_OUTCOMES }) outcome: AuditOutcome;
  @ApiProperty({ type: String, nullable: true }) ip: string | null;
  @ApiProperty({ type: String, nullable: true }) userAgent: string | null;
  @ApiProperty({ type: String, nullable: true }) requestId: string | null;
  @ApiProperty({ type: [String], description: 'names of the fields the change touched, never their values' }) changes: string[];
}

export class AuditPage {
  @ApiProperty({ type: [AuditEntryResponse] }) data: AuditEntryResponse[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}
