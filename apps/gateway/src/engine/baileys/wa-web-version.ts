import type { Logger } from 'pino';

/** `[2, 3000, <build>]`, as Baileys' `version` socket option takes it. */
export type WaWebVersion = [number, number, number];
export type WaWebVersionOrigin = 'fetched' | 'configured' | 'bundled';

/** What the version source needs of Baileys: its bundled version and its fetch of WhatsApp Web's current one. */
export interface WaWebVersionProbe {
  bundled: WaWebVersion;
  /** WhatsApp Web's current version, or null when it could not be read (offline, blocked, unparsable) */
  fetchLatest(signal: AbortSignal): Promise<WaWebVersion | null>;
}

export interface WaWebVersionOptions {
  /** WHATSAPP_WEB_VERSION */
  configured: WaWebVersion | null;
  /** WHATSAPP_WEB_VERSION_FETCH */
  fetch: boolean;
  /** WHATSAPP_WEB_VERSION_FETCH_TIMEOUT_MS */
  fetchTimeoutMs: number;
  logger: Logger;
}

export const formatWaWebVersion = (v: WaWebVersion): string => v.join('.');

/**
 * Which WhatsApp Web version the Baileys engine announces. WhatsApp refuses versions it considers too old (a 405
 * failure), and Baileys' bundled one ages with the release, so it is a setting: with the fetch allowed, the current
 * version is read from WhatsApp Web (bounded by a timeout) at start and again after a refusal; otherwise, or when the
 * fetch fails, WHATSAPP_WEB_VERSION, else Baileys' bundled version. One per gateway process: every session of the node
 * announces the same version, and one 405 makes the next connect of any of them read it again.
 */
export class WaWebVersionSource {
  private resolved: { version: WaWebVersion; origin: WaWebVersionOrigin } | null = null;
  private reading: Promise<{ version: WaWebVersion; origin: WaWebVersionOrigin }> | null = null;

  /** `probe` is lazy: Baileys is loaded on first use (a gateway on `sim` never loads it). */
  constructor(
    private readonly options: WaWebVersionOptions,
    private readonly probe: () => WaWebVersionProbe,
  ) {}

  /** The version to announce now; read once (concurrent callers share the read), and again after `refused()`. */
  current(): Promise<{ version: WaWebVersion; origin: WaWebVersionOrigin }> {
    if (this.resolved) return Promise.resolve(this.resolved);
    this.reading ??= this.read()
      .then((resolved) => (this.resolved = resolved))
      .finally(() => (this.reading = null));
    return this.reading;
  }

  /** The version last announced, for the gateway registry (`waWebVersion`); null until read. */
  inUse(): string | null {
    return this.resolved ? formatWaWebVersion(this.resolved.version) : null;
  }

  /** WhatsApp refused `version` (405): the next connect reads the version again (a fetch, when allowed). */
  refused(version: WaWebVersion): void {
    if (this.resolved && formatWaWebVersion(this.resolved.version) === formatWaWebVersion(version)) this.resolved = null;
  }

  private async read(): Promise<{ version: WaWebVersion; origin: WaWebVersionOrigin }> {
    const { configured, fetch, fetchTimeoutMs, logger } = this.options;
    if (fetch) {
      const fetched = await this.fetchBounded(fetchTimeoutMs);
      if (fetched) {
        logger.info({ waWebVersion: formatWaWebVersion(fetched), origin: 'fetched' }, 'WhatsApp Web version');
        return { version: fetched, origin: 'fetched' };
      }
    }
    const version = configured ?? this.probe().bundled;
    const origin = configured ? 'configured' : 'bundled';
    logger.info({ waWebVersion: formatWaWebVersion(version), origin, fetchFailed: fetch }, 'WhatsApp Web version');
    return { version, origin };
  }

  private async fetchBounded(timeoutMs: number): Promise<WaWebVersion | null> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => {
        abort.abort();
        resolve(null);
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.probe().fetchLatest(abort.signal).catch(() => null), timeout]);
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  }
}
