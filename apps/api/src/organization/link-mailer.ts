import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
import { ApiConfig } from '@app/config';

/** A single-use link for a person: an invitation or a password reset. */
export interface LinkMail {
  to: string;
  subject: string;
  /** what the link does, one sentence */
  intro: string;
  url: string;
  expiresAt: Date;
}

/**
 * Mails invitation and password-reset links through SMTP_URL (the operator's relay, not a tenant's target). Without
 * SMTP_URL nothing is sent: the link is only returned, once, to the caller who asked for it. A mail that cannot be
 * sent does not undo the invitation or reset (its link was returned anyway); it is logged, without the link.
 */
@Injectable()
export class LinkMailer implements OnApplicationShutdown {
  private readonly logger = new Logger(LinkMailer.name);
  private readonly transport: Transporter | null;

  constructor(private readonly config: ApiConfig) {
    this.transport = config.SMTP_URL ? createTransport(config.SMTP_URL) : null;
  }

  get enabled(): boolean {
    return this.transport !== null;
  }

  /** True when the relay accepted the mail. */
  async send(mail: LinkMail): Promise<boolean> {
    if (!this.transport) return false;
    try {
      await this.transport.sendMail({
        from: this.config.SMTP_FROM,
        to: mail.to,
        subject: mail.subject,
        text: `${mail.intro}\n\n${mail.url}\n\nThe link works once, until ${mail.expiresAt.toISOString()}.\n`,
      });
      return true;
    } catch (err) {
      this.logger.warn(`mail "${mail.subject}" to ${mail.to} not sent: ${(err as Error).message}`);
      return false;
    }
  }

  onApplicationShutdown(): void {
    this.transport?.close();
  }
}
