import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The benches load the built apps (`dist/`) by path, which no compiler checks: a file moved in a refactor left
 * `npm run bench:api` failing at its first line. Every module a bench loads from dist/ must exist, with every name
 * it takes from it (`const { A, B } = require(…)`, through the benches' `dist(…)` / `api(…)` helpers too).
 */
const ROOT = join(__dirname, '..');
const BENCH = join(ROOT, 'bench');

interface Load {
  file: string;
  module: string;
  names: string[];
}

/** `const helper = (p) => require(join(ROOT, 'prefix', p))` → helper: prefix */
function helpers(src: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of src.matchAll(/const (\w+) = \(p\) => require\(join\(ROOT, '([^']+)', p\)\)/g)) found.set(m[1], m[2]);
  return found;
}

function loads(file: string): Load[] {
  const src = readFileSync(join(BENCH, file), 'utf8');
  const out: Load[] = [];
  const names = (list: string | undefined) => (list ? list.split(',').map((n) => n.trim().split(/\s*:\s*/)[0]).filter(Boolean) : []);
  for (const m of src.matchAll(/(?:const \{([^}]*)\} = )?require\(join\(ROOT, '(dist\/[^']+)'\)\)/g)) {
    out.push({ file, module: m[2], names: names(m[1]) });
  }
  for (const [helper, prefix] of helpers(src)) {
    for (const m of src.matchAll(new RegExp(`(?:const \\{([^}]*)\\} = )?\\b${helper}\\('([^']+)'\\)`, 'g'))) {
      out.push({ file, module: join(prefix, m[2]), names: names(m[1]) });
    }
  }
  return out;
}

describe('the benches load what dist/ has', () => {
  const all = readdirSync(BENCH)
    .filter((f) => f.endsWith('.js'))
    .flatMap(loads);

  it('finds the loads (the patterns above still match the benches)', () => {
    expect(all.length).toBeGreaterThan(20);
    expect(all.some((l) => l.file === 'api.bench.js' && l.module.includes('auth.decorators'))).toBe(true);
  });

  it.each(all.map((l) => [`${l.file}: ${l.module}`, l] as const))('%s', (_name, load) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by path, as the bench loads it
    const exported = require(join(ROOT, load.module)) as Record<string, unknown>;
    const missing = load.names.filter((n) => !(n in exported));
    expect(missing).toEqual([]);
  });
});
