import { IsOptional, IsString } from 'class-validator';
import { ConfigError } from './load-config';
import { BaseConfig } from './base.config';

/**
 * The admin CLI. `BOOTSTRAP_*` name a first organization, its owner and a first API key, created by
 * `cli bootstrap` (run by `npm start` and compose's migrate service) once: later runs change nothing.
 */
export class CliConfig extends BaseConfig {
  @IsOptional() @IsString()
  BOOTSTRAP_ORG_NAME?: string;

  @IsOptional() @IsString()
  BOOTSTRAP_OWNER_EMAIL?: string;

  @IsOptional() @IsString()
  BOOTSTRAP_OWNER_PASSWORD?: string;

  /** the three bootstrap values, or null when none is set */
  get bootstrap(): { name: string; ownerEmail: string; ownerPassword: string } | null {
    if (!this.BOOTSTRAP_ORG_NAME) return null;
    return { name: this.BOOTSTRAP_ORG_NAME, ownerEmail: this.BOOTSTRAP_OWNER_EMAIL!, ownerPassword: this.BOOTSTRAP_OWNER_PASSWORD! };
  }

  override finalize(): void {
    super.finalize();
    const set = (['BOOTSTRAP_ORG_NAME', 'BOOTSTRAP_OWNER_EMAIL', 'BOOTSTRAP_OWNER_PASSWORD'] as const).filter((k) => this[k]);
    if (set.length > 0 && set.length < 3) {
      const missing = ['BOOTSTRAP_ORG_NAME', 'BOOTSTRAP_OWNER_EMAIL', 'BOOTSTRAP_OWNER_PASSWORD'].find((k) => !set.includes(k as never))!;
      throw new ConfigError(missing, `is required when ${set.join(' and ')} ${set.length > 1 ? 'are' : 'is'} set`);
    }
    if (this.BOOTSTRAP_OWNER_PASSWORD && this.BOOTSTRAP_OWNER_PASSWORD.length < 8) throw new ConfigError('BOOTSTRAP_OWNER_PASSWORD', 'must be at least 8 characters');
  }
}
