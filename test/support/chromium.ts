import { existsSync } from 'node:fs';

/** The Chromium the browser suites drive through puppeteer-core: CHROMIUM_PATH, or Debian's. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Throws one line saying how to get it when it is absent: puppeteer-core downloads no browser (nothing is fetched at
 * install or test time), so a machine without one installs the distribution's (the README's test prerequisites).
 */
export function assertChromium(): void {
  if (existsSync(CHROMIUM)) return;
  const install = process.platform === 'darwin' ? 'brew install --cask chromium' : 'sudo apt-get install chromium (.ci/run does)';
  throw new Error(`Chromium not found at ${CHROMIUM}: ${install}, or point CHROMIUM_PATH at a Chromium or Chrome binary`);
}
