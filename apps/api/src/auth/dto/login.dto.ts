import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';

export class LoginDto {
  @ApiProperty({ example: 'owner@acme.test', minLength: 3, maxLength: 320 })
  @IsString() @MinLength(3) @MaxLength(320)
  email: string;

  @ApiProperty({ minLength: 1, maxLength: 1024 })
  @IsString() @MinLength(1) @MaxLength(1024)
  password: string;
}

export class TokenResponse {
  @ApiProperty() accessToken: string;
  @ApiProperty({ example: 'Bearer' }) tokenType: 'Bearer';
  @ApiProperty({ type: 'integer', description: 'seconds' }) expiresIn: number;
}

export class MeResponse {
  @ApiProperty({ enum: ['user', 'apiKey'] }) kind: 'user' | 'apiKey';
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ nullable: true, enum: ['owner', 'admin', 'member', 'viewer'] }) role: string | null;
  @ApiProperty({ type: [String] }) capabilities: string[];
}
