import { Injectable } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { DomainError } from '@app/contracts';
import { refusedTargetReason } from '@app/net-guard';

/**
 * A session's `proxyUrl` is a host a tenant aims the gateway at, so it passes the webhooks' address guard when it is
 * saved: loopback, private, link-local and metadata hosts in any spelling are a 422, unless the operator lists the host
 * or its range in SESSION_PROXY_ALLOWED. The gateway checks the address it dials again (proxy-agent.ts).
 */
@Injectable()
export class SessionProxyPolicy {
  constructor(private readonly config: ApiConfig) {}

  async assertAllowed(proxyUrl: string | null | undefined): Promise<void> {
    if (!proxyUrl) return;
    const reason = await refusedTargetReason(new URL(proxyUrl).hostname, { allow: this.config.sessionProxyAllowList });
    if (reason) {
      throw new DomainError('validation_error', 'request is invalid', {
        fields: { proxyUrl: [`proxyUrl target is not allowed: ${reason} (an operator can allow a private proxy in SESSION_PROXY_ALLOWED)`] },
      });
    }
  }
}
