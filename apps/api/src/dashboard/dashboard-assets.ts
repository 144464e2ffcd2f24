import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Where the browser build lands: `npm run build` runs `vite build` into dist/dashboard at the repository root. */
export function dashboardDirectory(from = __dirname): string | null {
  // the module runs from dist/apps/api/src/dashboard (built) or apps/api/src/dashboard (ts-jest): both sit under the
  // folder that holds package.json, so walk up to it rather than counting levels
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      const built = join(dir, 'dist', 'dashboard');
      return existsSync(join(built, 'index.html')) ? built : null;
    }
    if (dirname(dir) === dir) return null;
  }
}
