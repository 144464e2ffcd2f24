import { Injectable } from '@nestjs/common';
import { ApiConfig } from '@app/config';
import { BackoffPolicy, LoginBackoff, RequestRateLimits } from '@app/redis';
import { LoginGate } from '../auth/login-gate';
import { LimitMetrics, RateLimitName } from './limit-metrics';

/**
 * The stricter limits of `POST /auth/login`: attempts per IP per minute, and exponential backoff after failures per
 * account from one source address, per source address (any account), and per account from every address past a high
 * ceiling. The pair, not the account, is what a few failures lock: a stranger who knows an email and guesses from
 * their own address backs off themselves only, and its owner still logs in from theirs; only a guessing spread over
 * many addresses (beyond LOGIN_ACCOUNT_CEILING_FAILURES) backs the account off everywhere. Checked before the password
 * is, so a refused attempt costs no query and no scrypt; a success forgets the failures of that account from that
 * address (not the account-wide count, which a spray would otherwise see reset by its owner's logins).
 */
@Injectable()
export class LoginThrottle implements LoginGate {
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

  /** Throws 429 when the account from this IP, the IP or the account everywhere must wait; otherwise counts the attempt against the IP. */
  async admit(email: string, ip: string): Promise<void> {
    const subjects: Array<[RateLimitName, string]> = [
      ['login_account', accountFrom(email, ip)],
      ['login_ip', address(ip)],
      ['login_account_ceiling', account(email)],
    ];
    const waits = await Promise.all(subjects.map(async ([limit, subject]) => ({ limit, wait: await this.backoff.blockedFor(subject) })));
    const longest = waits.reduce((a, b) => (b.wait > a.wait ? b : a));
    if (longest.wait > 0) throw this.metrics.refused(longest.limit, longest.wait);
    const hit = await this.limits.hit('login_ip', ip, { limit: this.config.LOGIN_RATE_IP_PER_MIN, windowMs: 60_000 });
    if (!hit.accepted) throw this.metrics.refused('login_ip', hit.retryAfterMs);
  }

  async failed(email: string, ip: string): Promise<void> {
    const c = this.config;
    await Promise.all([
      this.backoff.failed(accountFrom(email, ip), this.policy(c.LOGIN_FREE_FAILURES_PER_ACCOUNT)),
      this.backoff.failed(address(ip), this.policy(c.LOGIN_FREE_FAILURES_PER_IP)),
      this.backoff.failed(account(email), this.policy(c.LOGIN_ACCOUNT_CEILING_FAILURES)),
    ]);
  }

  async succeeded(email: string, ip: string): Promise<void> {
    await this.backoff.succeeded(accountFrom(email, ip));
  }
}

const normalEmail = (email: string) => email.trim().toLowerCase();
const account = (email: string) => `account:${normalEmail(email)}`;
const address = (ip: string) => `ip:${ip}`;
const accountFrom = (email: string, ip: string) => `account-ip:${normalEmail(email)}|${ip}`;
