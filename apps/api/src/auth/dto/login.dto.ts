import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';

export class LoginDto {
  @ApiProperty({ example: 'owner@acme.test' })
  @IsString() @MinLength(3) @MaxLength(320)
  email: string;

  @ApiProperty()
  @IsString() @MinLength(1) @MaxLength(1024)
  password: string;
}

export class TokenResponse {
  @ApiProperty() accessToken: string;
  @ApiProperty({ example: 'Bearer' }) tokenType: 'Bearer';
  @ApiProperty({ description: 'seconds' }) expiresIn: number;
}

export class MeResponse {
  @ApiProperty({ enum: ['user', 'apiKey'] }) kind: 'user' | 'apiKey';
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ nullable: true, enum: ['owner', 'admin', 'member', 'viewer'] }) role: string | null;
  @ApiProperty({ type: [String] }) capabilities: string[];
}
