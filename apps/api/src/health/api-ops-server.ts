import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { OpsEndpoints } from '@app/infra';

/** The port variable a startup failure names, when the port that failed is not PORT. */
export class OpsPortInUse extends Error {
  readonly code = 'EADDRINUSE';
  constructor(
    readonly port: number,
    readonly portVariable: string,
  ) {
    super(`port ${port} is already in use`);
  }
}

/**
 * /healthz, /readyz and /metrics on API_OPS_PORT, like the gateway's and the dispatcher's: metrics name every route
 * and its load, which the public port must not tell anyone who asks. Started with the app, closed with it.
 */
@Injectable()
export class ApiOpsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: { port: number; close: () => Promise<void> } | null = null;

  constructor(
    private readonly config: ApiConfig,
    private readonly ops: OpsEndpoints,
  ) {}

  /** The bound port (API_OPS_PORT, or the one the OS chose for 0). */
  get port(): number {
    if (!this.server) throw new Error('the ops server is not started');
    return this.server.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    try {
      this.server = await this.ops.start(this.config.API_OPS_PORT, this.config.OPS_HOST);
    } catch (err) {
      if ((err as { code?: unknown }).code === 'EADDRINUSE') throw new OpsPortInUse(this.config.API_OPS_PORT, 'API_OPS_PORT');
      throw err;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
    this.server = null;
  }
}
