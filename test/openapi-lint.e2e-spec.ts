import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..');
const run = promisify(execFile);
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);
/** Both CLIs exit non-zero on a finding; their JSON report is what the test reads, whatever the exit code. */
const report = async (name: string, args: string[]): Promise<string> => {
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  try {
    return (await run(bin(name), args, { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (err) {
    return (err as { stdout?: string }).stdout ?? '';
  }
};

/**
 * The committed API documents pass linters no one here wrote, with nothing left over (issue 22 item 2): Redocly's
 * recommended rules (redocly.yaml: `recommended-strict`, warnings count as errors) and Spectral's OpenAPI ruleset
 * (.spectral.yaml) on docs/openapi.json, and Spectral's AsyncAPI ruleset on docs/asyncapi.yaml (the WebSocket).
 */
describe('the API documents under standard linters', () => {
  it('redocly lint (recommended): 0 errors, 0 warnings on docs/openapi.json', async () => {
    const out = await report('redocly', ['lint', 'docs/openapi.json', '--format', 'json']);
    const parsed = JSON.parse(out) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }> };
    expect(parsed.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
    expect(parsed.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('spectral lint (spectral:oas): no finding of any severity on docs/openapi.json', async () => {
    const out = await report('spectral', ['lint', 'docs/openapi.json', '--ruleset', '.spectral.yaml', '--format', 'json', '--fail-severity', 'hint', '--quiet']);
    const findings = JSON.parse(out) as Array<{ code: string; message: string; path: string[] }>;
    expect(findings.map((f) => `${f.code} ${f.path.join('.')}: ${f.message}`)).toEqual([]);
  });

  it('spectral lint (spectral:asyncapi): no finding of any severity on docs/asyncapi.yaml', async () => {
    const out = await report('spectral', ['lint', 'docs/asyncapi.yaml', '--ruleset', '.spectral-asyncapi.yaml', '--format', 'json', '--fail-severity', 'hint', '--quiet']);
    const findings = JSON.parse(out) as Array<{ code: string; message: string; path: string[] }>;
    expect(findings.map((f) => `${f.code} ${f.path.join('.')}: ${f.message}`)).toEqual([]);
  });

  it('the linters report a real problem (the test can fail)', async () => {
    const out = await report('spectral', ['lint', 'test/fixtures/openapi-with-problems.json', '--ruleset', '.spectral.yaml', '--format', 'json', '--fail-severity', 'hint', '--quiet']);
    expect((JSON.parse(out) as Array<{ code: string }>).map((f) => f.code)).toEqual(expect.arrayContaining(['operation-tag-defined', 'oas3-api-servers']));
    const redocly = JSON.parse(await report('redocly', ['lint', 'test/fixtures/openapi-with-problems.json', '--format', 'json'])) as { totals: { errors: number } };
    expect(redocly.totals.errors).toBeGreaterThan(0);
  });
});
