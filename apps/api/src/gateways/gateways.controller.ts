import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { GatewayDirectory } from '@app/fleet';
import { RequirePermissions } from '../auth/auth.decorators';

export class GatewayResponse {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'heartbeat not expired' }) alive: boolean;
  @ApiProperty({ description: 'handing its sessions to other gateways; takes no new ones' }) draining: boolean;
  @ApiProperty() sessionCount: number;
  @ApiProperty() capacity: number;
  @ApiProperty({ enum: ['baileys', 'sim'] }) engine: string;
  @ApiProperty() version: string;
  @ApiProperty({ description: 'epoch ms' }) startedAt: number;
  @ApiProperty({ description: 'epoch ms' }) lastHeartbeatAt: number;
}

export class GatewayList {
  @ApiProperty({ type: [GatewayResponse] }) data: GatewayResponse[];
}

/** Operators' view of the gateway nodes; anyone who may read sessions may see where they can run. */
@ApiTags('gateways')
@ApiBearerAuth()
@Controller('gateways')
export class GatewaysController {
  constructor(private readonly directory: GatewayDirectory) {}

  @Get()
  @RequirePermissions('sessions:read')
  @ApiOkResponse({ type: GatewayList })
  async list(): Promise<GatewayList> {
    const entries = await this.directory.list();
    return {
      data: entries.map((g) => ({
        id: g.id,
        alive: g.alive,
        // registry entries written before drain existed have no such field
        draining: 'draining' in g && g.draining === true,
        sessionCount: g.sessionCount,
        capacity: g.capacity,
        engine: g.engine,
        version: g.version,
        startedAt: g.startedAt,
        lastHeartbeatAt: g.lastHeartbeatAt,
      })),
    };
  }
}
