import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsDateString,
  IsEmail,
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { ALL_PERMISSIONS, PERMISSIONS, ROLES, type Role } from '@app/contracts';
import { IsCidr } from './is-cidr';

const trimmed = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
/** null and undefined differ on PATCH: undefined keeps a field, null clears a nullable one. */
const present = (_: object, v: unknown) => v !== undefined;

export class OrganizationCounts {
  @ApiProperty({ type: 'integer' }) sessions: number;
  @ApiProperty({ type: 'integer' }) webhooks: number;
  @ApiProperty({ type: 'integer' }) apiKeys: number;
  @ApiProperty({ type: 'integer' }) members: number;
}

export class OrganizationQuotaFigures {
  @ApiProperty({ type: 'integer' }) sessions: number;
  @ApiProperty({ type: 'integer' }) webhooks: number;
  @ApiProperty({ type: 'integer' }) apiKeys: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'null: no limit on members' }) members: number | null;
}

export class OrganizationResponse {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: OrganizationQuotaFigures }) quotas: OrganizationQuotaFigures;
  @ApiProperty({ type: OrganizationCounts, description: 'what the organization holds now; `members` counts pending invitations too' }) usage: OrganizationCounts;
}

export class UpdateOrganizationDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @Transform(trimmed) @IsString() @MinLength(1) @MaxLength(200)
  name: string;
}

export class MemberResponse {
  @ApiProperty() id: string;
  @ApiProperty() email: string;
  @ApiProperty({ type: String, nullable: true }) name: string | null;
  @ApiProperty({ enum: ROLES }) role: Role;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastLoginAt: string | null;
}

export class MemberList {
  @ApiProperty({ type: [MemberResponse] }) data: MemberResponse[];
}

export class ChangeRoleDto {
  @ApiProperty({ enum: ROLES })
  @IsIn(ROLES)
  role: Role;
}

export class CreateInvitationDto {
  @ApiProperty({ example: 'colleague@acme.test', maxLength: 320 })
  @Transform(trimmed) @IsString() @MaxLength(320) @IsEmail({ allow_ip_domain: false, require_tld: false })
  email: string;

  @ApiProperty({ enum: ROLES })
  @IsIn(ROLES)
  role: Role;
}

export class InvitationResponse {
  @ApiProperty() id: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: ROLES }) role: Role;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class CreatedInvitationResponse extends InvitationResponse {
  @ApiProperty({ description: 'shown once; only its hash is kept' }) token: string;
  @ApiProperty({ description: 'the link to send the invitee (PUBLIC_URL); shown once' }) url: string;
}

export class InvitationList {
  @ApiProperty({ type: [InvitationResponse] }) data: InvitationResponse[];
}

export class AcceptInvitationDto {
  @ApiProperty({ maxLength: 200 })
  @IsString() @MinLength(1) @MaxLength(200)
  token: string;

  @ApiProperty({ minLength: 8, maxLength: 1024 })
  @IsString() @MinLength(8) @MaxLength(1024)
  password: string;

  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional() @Transform(trimmed) @IsString() @MinLength(1) @MaxLength(200)
  name?: string;
}

export class ChangePasswordDto {
  @ApiProperty({ minLength: 1, maxLength: 1024 })
  @IsString() @MinLength(1) @MaxLength(1024)
  currentPassword: string;

  @ApiProperty({ minLength: 8, maxLength: 1024 })
  @IsString() @MinLength(8) @MaxLength(1024)
  newPassword: string;
}

export class ResetPasswordDto {
  @ApiProperty({ maxLength: 200 })
  @IsString() @MinLength(1) @MaxLength(200)
  token: string;

  @ApiProperty({ minLength: 8, maxLength: 1024 })
  @IsString() @MinLength(8) @MaxLength(1024)
  newPassword: string;
}

export class PasswordResetLinkResponse {
  @ApiProperty({ description: 'shown once; only its hash is kept' }) token: string;
  @ApiProperty({ description: 'the link to send the member (PUBLIC_URL); shown once' }) url: string;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
}

const KEY_PERMISSIONS = [...PERMISSIONS, ALL_PERMISSIONS];

class ApiKeyScopeDto {
  @ApiPropertyOptional({ type: [String], nullable: true, maxItems: 100, description: 'the only sessions the key reaches; null or absent: every session' })
  @ValidateIf(present) @IsOptional() @IsArray() @ArrayMaxSize(100) @ArrayUnique() @IsString({ each: true }) @Matches(/^[A-Za-z0-9_]{1,64}$/, { each: true })
  sessionIds?: string[] | null;

  @ApiPropertyOptional({ type: [String], nullable: true, maxItems: 50, example: ['203.0.113.0/24', '2001:db8::/32'], description: 'IPv4/IPv6 CIDRs the key may be used from; null or absent: anywhere' })
  @ValidateIf(present) @IsOptional() @IsArray() @ArrayMaxSize(50) @IsString({ each: true }) @IsCidr({ each: true })
  allowedIps?: string[] | null;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'in the future; null or absent: never' })
  @ValidateIf(present) @IsOptional() @IsDateString({ strict: true })
  expiresAt?: string | null;
}

export class CreateApiKeyDto extends ApiKeyScopeDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @Transform(trimmed) @IsString() @MinLength(1) @MaxLength(200)
  name: string;

  @ApiProperty({ type: [String], items: { type: 'string', enum: KEY_PERMISSIONS }, minItems: 1, maxItems: 20 })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(20) @ArrayUnique() @IsIn(KEY_PERMISSIONS, { each: true })
  permissions: string[];
}

export class UpdateApiKeyDto extends ApiKeyScopeDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @ValidateIf(present) @Transform(trimmed) @IsString() @MinLength(1) @MaxLength(200)
  name?: string;
}

export class ApiKeyResponse {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String] }) permissions: string[];
  @ApiProperty({ type: [String], nullable: true }) sessionIds: string[] | null;
  @ApiProperty({ type: [String], nullable: true }) allowedIps: string[] | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) expiresAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, nullable: true, description: '`user:<id>`, `apiKey:<id>` or `cli`' }) createdBy: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'to the minute' }) lastUsedAt: string | null;
  @ApiProperty({ description: 'the first characters of the token, to recognise it' }) tokenHint: string;
}

export class CreatedApiKeyResponse extends ApiKeyResponse {
  @ApiProperty({ description: 'shown once; only its hash is kept' }) token: string;
}

export class ApiKeyList {
  @ApiProperty({ type: [ApiKeyResponse] }) data: ApiKeyResponse[];
}
