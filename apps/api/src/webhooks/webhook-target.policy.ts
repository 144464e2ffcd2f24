import { Injectable } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { DomainError } from '@app/contracts';
import { refusedTargetReason } from '@app/net-guard';

/**
 * Refuses webhook URLs that point into our own network (SSRF) at create/update time.
 * The dispatcher checks the resolved address again when it connects (DNS can change).
 */
@Injectable()
export class WebhookTargetPolicy {
  constructor(private readonly config: ApiConfig) {}

  async assertAllowed(rawUrl: string): Promise<void> {
    if (this.config.WEBHOOK_ALLOW_PRIVATE_TARGETS) return;
    const reason = await refusedTargetReason(new URL(rawUrl).hostname);
    if (reason) {
      throw new DomainError('validation_error', 'request is invalid', {
        fields: { url: [`url target is not allowed: ${reason} (set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow private targets)`] },
      });
    }
  }
}
