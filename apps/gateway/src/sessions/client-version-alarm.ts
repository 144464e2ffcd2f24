import type { Logger } from 'pino';

/**
 * WhatsApp refused this client's WhatsApp Web version (405). Every session of the node announces the same version, so
 * the operator is told once per process, in one log line at error, what to do; the metric counts every refusal (an
 * alert can watch it). The sessions themselves show `client_version_refused` and retry with the long delay.
 */
export class ClientVersionAlarm {
  private told = false;

  constructor(
    private readonly logger: Logger,
    private readonly count: () => void,
  ) {}

  refused(sessionId: string): void {
    this.count();
    if (this.told) return;
    this.told = true;
    this.logger.error(
      { sessionId, reason: 'client_version_refused' },
      'WhatsApp refused this client version (405): set WHATSAPP_WEB_VERSION to the current WhatsApp Web version, or allow the version fetch (WHATSAPP_WEB_VERSION_FETCH=true); sessions keep retrying with the long delay',
    );
  }
}
