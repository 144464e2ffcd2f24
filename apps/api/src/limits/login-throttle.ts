import { Injectable } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { BackoffPolicy, LoginBackoff, RequestRateLimits } from '@app/redis';
import { LimitMetrics, RateLimitName } from './limit-metrics';
import { rateLimited } from './rate-limited';

/**
 * The stricter limits of `POST /auth/login`: attempts per IP per minute, and exponential backoff after failures
 * per account (its email) and per IP. Checked before the password is, so a refused attempt costs no query and no
 * scrypt; a success forgets the account's failures.
 */
@Injectable()
export class LoginThrottle {
  constructor(
    private readonly config: ApiConfig,
    private readonly limits: RequestRateLimits,
    private readonly backoff: LoginBackoff,
    private readonly metrics: LimitMetrics,
  ) {}

  private policy(freeFailures: number): BackoffPolicy {
    const c = this.config;
    return { freeFailures, baseMs: c.LOGIN_BACKOFF_BASE_MS, maxMs: c.LOGIN_BACKOFF_MAX_MS, memoryMs: Math.max(c.LOGIN_BACKOFF_MAX_MS, 15 * 60_000) };
  }

  /** Throws 429 when the IP or the account must wait; otherwise counts the attempt against the IP. */
  async admit(email: string, ip: string): Promise<void> {
    const [accountWait, ipWait] = await Promise.all([this.backoff.blockedFor(account(email)), this.backoff.blockedFor(address(ip))]);
    if (accountWait > 0 || ipWait > 0) throw this.refuse(accountWait >= ipWait ? 'login_account' : 'login_ip', Math.max(accountWait, ipWait));
    const hit = await this.limits.hit('login_ip', ip, { limit: this.config.LOGIN_RATE_IP_PER_MIN, windowMs: 60_000 });
    if (!hit.accepted) throw this.refuse('login_ip', hit.retryAfterMs);
  }

  async failed(email: string, ip: string): Promise<void> {
    await Promise.all([
      this.backoff.failed(account(email), this.policy(this.config.LOGIN_FREE_FAILURES_PER_ACCOUNT)),
      this.backoff.failed(address(ip), this.policy(this.config.LOGIN_FREE_FAILURES_PER_IP)),
    ]);
  }

  async succeeded(email: string): Promise<void> {
    await this.backoff.succeeded(account(email));
  }

  private refuse(limit: RateLimitName, retryAfterMs: number) {
    this.metrics.refusals.inc({ limit });
    return rateLimited(limit, retryAfterMs);
  }
}

const account = (email: string) => `account:${email.trim().toLowerCase()}`;
const address = (ip: string) => `ip:${ip}`;
