/*
 * The suites of a jest `--json` results file, each with its project and seconds: what scripts/slowest-suites.js prints
 * and scripts/suite-times.js records.
 *
 * Jest's JSON names a suite by its path only, and a file of the engine matrix runs twice (projects e2e and
 * e2e-baileys). `npm test` (scripts/test.js) writes each suite's `project` into the file; a file jest wrote by itself
 * has none, and then the titles tell: the matrix suites name their engine ("sim engine" / "baileys engine"), and
 * failing that the second run of a path is taken as the baileys pass (in band, e2e runs first).
 */
const { relative, resolve } = require('node:path');

const ROOT = resolve(__dirname, '..');

function guessProject(suite, pass) {
  const path = relative(ROOT, suite.name);
  if (!path.startsWith('test/')) return 'unit';
  const titles = suite.assertionResults.flatMap((a) => a.ancestorTitles).join(' ');
  return /\bbaileys engine\b/.test(titles) || (!/\bsim engine\b/.test(titles) && pass === 2) ? 'e2e-baileys' : 'e2e';
}

/** [{ path (from the repository root), project, seconds, status }] in the file's order. */
function suitesOf(results) {
  const seen = new Map();
  return results.testResults.map((suite) => {
    seen.set(suite.name, (seen.get(suite.name) ?? 0) + 1);
    return {
      path: relative(ROOT, suite.name).split('\\').join('/'),
      project: suite.project ?? guessProject(suite, seen.get(suite.name)),
      seconds: (suite.endTime - suite.startTime) / 1000,
      status: suite.status,
    };
  });
}

module.exports = { suitesOf };
