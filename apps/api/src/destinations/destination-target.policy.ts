import { Injectable } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { DomainError } from '@app/contracts';
import { refusedTargetReason } from '@app/net-guard';

/**
 * Refuses destination URLs (webhooks, brokers) that point into our own network (SSRF) at create/update time.
 * The dispatcher checks the resolved address again when it connects (DNS can change).
 */
@Injectable()
export class DestinationTargetPolicy {
  constructor(private readonly config: ApiConfig) {}

  /** `field`: the body's field that named the URL, for the error's details. */
  async assertAllowed(rawUrl: string, field = 'url'): Promise<void> {
    if (this.config.WEBHOOK_ALLOW_PRIVATE_TARGETS) return;
    const reason = await refusedTargetReason(new URL(rawUrl).hostname);
    if (reason) {
      throw new DomainError('validation_error', 'request is invalid', {
        fields: { [field]: [`${field} target is not allowed: ${reason} (set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow private targets)`] },
      });
    }
  }
}
