import { Injectable } from '@nestjs/common';
import { lookup } from 'node:dns/promises';
import { ApiConfig } from '@app/config';
import { DomainError } from '@app/contracts';
import { forbiddenAddressReason, forbiddenHostReason, isAddressLiteral, normalizeHostname } from '@app/net-guard';

const LOOKUP_TIMEOUT_MS = 2000;

/**
 * Refuses webhook URLs that point into our own network (SSRF) at create/update time.
 * The dispatcher checks the resolved address again when it connects (DNS can change).
 */
@Injectable()
export class WebhookTargetPolicy {
  constructor(private readonly config: ApiConfig) {}

  async assertAllowed(rawUrl: string): Promise<void> {
    if (this.config.WEBHOOK_ALLOW_PRIVATE_TARGETS) return;
    const refuse = (reason: string) => {
      throw new DomainError('validation_error', 'request is invalid', {
        fields: { url: [`url target is not allowed: ${reason} (set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow private targets)`] },
      });
    };
    const host = new URL(rawUrl).hostname;
    const byName = forbiddenHostReason(host);
    if (byName) refuse(byName);
    const name = normalizeHostname(host)!;
    const addresses = isAddressLiteral(name) ? [] : await this.resolve(name);
    for (const address of addresses) {
      const reason = forbiddenAddressReason(address);
      if (reason) refuse(reason);
    }
  }

  /** An unresolvable host is accepted now (DNS may be set up later); the dispatcher re-checks at connect. */
  private async resolve(host: string): Promise<string[]> {
    try {
      const found = await Promise.race([
        lookup(host, { all: true, verbatim: true }),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), LOOKUP_TIMEOUT_MS).unref()),
      ]);
      return found.map((a) => a.address);
    } catch {
      return [];
    }
  }
}
