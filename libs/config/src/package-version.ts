import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cached: string | undefined;

/**
 * The version in the repository's package.json, read once: the nearest one above this file, which is the same from
 * the sources (ts-jest) and from dist/ (the image copies package.json beside dist/).
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  cached = '0.0.0';
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const version = (JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version;
      if (typeof version === 'string') cached = version;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  return cached;
}
