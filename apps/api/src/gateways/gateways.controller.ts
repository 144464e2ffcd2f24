import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiProperty, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { PLATFORM_OPERATE } from '@app/contracts';
import { SessionsRepository } from '@app/database';
import { GatewayDirectory } from '@app/fleet';
import { CurrentPrincipal, RequirePermissions } from '../common/auth.decorators';
import { ApiEndpoint } from '../common/api-docs';
import type { Principal } from '../common/principal';

export class GatewayResponse {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'heartbeat not expired' }) alive: boolean;
  @ApiProperty({ description: 'handing its sessions to other gateways; takes no new ones' }) draining: boolean;
  @ApiProperty({ type: 'integer' }) sessionCount: number;
  @ApiProperty({ type: 'integer' }) capacity: number;
  @ApiProperty({ enum: ['baileys', 'sim'] }) engine: string;
  @ApiProperty({ description: "the gateway's own (application) version" }) version: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'the WhatsApp Web version its engine announces to WhatsApp (`2.3000.x`); null for the sim engine, or until known',
  })
  waWebVersion: string | null;
  @ApiProperty({
    description:
      "the node's WhatsApp is the network simulator (the `sim` engine, or Baileys against WHATSAPP_EMULATOR_URL): a demo or a test, where the simulator's control API plays the phone that scans",
  })
  simulated: boolean;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) startedAt: number;
  @ApiProperty({ type: 'integer', format: 'int64', description: 'epoch ms' }) lastHeartbeatAt: number;
}

export class GatewayList {
  @ApiProperty({ type: [GatewayResponse] }) data: GatewayResponse[];
}

/**
 * The gateway nodes. The platform operator (`platform:operate`, granted only by the admin CLI) sees the whole fleet;
 * a tenant sees only the gateways hosting its own sessions, with its own session count, never another's load.
 */
@ApiTags('gateways')
@ApiBearerAuth()
@ApiSecurity('api-key')
@Controller('gateways')
export class GatewaysController {
  constructor(
    private readonly directory: GatewayDirectory,
    private readonly sessions: SessionsRepository,
  ) {}

  @Get()
  @RequirePermissions('sessions:read')
  @ApiEndpoint(
    'List gateways',
    'The platform operator (`platform:operate`) sees the whole fleet; a tenant sees only the gateways hosting its own sessions, with its own session count.',
    'unauthorized',
    'forbidden',
    'rate_limited',
  )
  @ApiOkResponse({ type: GatewayList })
  async list(@CurrentPrincipal() p: Principal): Promise<GatewayList> {
    const operator = p.permissions.has(PLATFORM_OPERATE);
    const [all, own] = await Promise.all([this.directory.list(), operator ? null : this.sessions.placedCountsOfOrganization(p.organizationId)]);
    const entries = own ? all.filter((g) => own.has(g.id)) : all;
    return {
      data: entries.map((g) => ({
        id: g.id,
        alive: g.alive,
        draining: g.draining === true,
        sessionCount: own ? own.get(g.id)! : g.sessionCount,
        capacity: g.capacity,
        engine: g.engine,
        version: g.version,
        waWebVersion: g.waWebVersion ?? null,
        simulated: g.simulated ?? g.engine === 'sim',
        startedAt: g.startedAt,
        lastHeartbeatAt: g.lastHeartbeatAt,
      })),
    };
  }
}
