import { join } from 'node:path';
import { COMMANDS } from '../apps/cli/src/commands';
import { startApi } from './support/api-app';
import { execFileRegistered } from './support/process-registry';
import { REPO_ROOT } from './support/run-context';
import { bearer, closeTestDataSource } from './support/seed';


/** The admin CLI as an operator runs it (the built entry point), bootstrapping an organization without copy-paste. */
describe('admin CLI: help, a first key with the organization, listings, bootstrap', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  const cli = (args: string[], env: Record<string, string> = {}) =>
    execFileRegistered(process.execPath, [join(REPO_ROOT, 'dist/apps/cli/src/main.js'), ...args], { env: { ...process.env, ...env } });
  const failing = (args: string[]) => cli(args).then(() => { throw new Error(`${args.join(' ')} succeeded`); }, (e: { code: number; stdout: string; stderr: string }) => e);

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => {
    await api.app.close();
    await closeTestDataSource();
  });

  it('--help lists every command with its summary, instead of "unknown command"', async () => {
    const outputs = await Promise.all([['--help'], ['-h'], ['help'], []].map((args) => cli(args)));
    for (const { stdout } of outputs) {
      for (const command of COMMANDS) expect(stdout).toMatch(new RegExp(`^  ${command.name} +${command.summary.slice(0, 20).replace(/[()*|.]/g, '\\$&')}`, 'm'));
    }
  });

  it('<command> --help shows its usage and every option, for every command, without touching the database', async () => {
    const outputs = await Promise.all(COMMANDS.map((command) => cli([command.name, '--help'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' })));
    for (const [i, command] of COMMANDS.entries()) {
      const { stdout } = outputs[i];
      expect(stdout.split('\n')[0]).toBe(`usage: npm run -s cli -- ${[command.name, ...command.options.map((o) => {
        const text = o.value ? `--${o.name} ${o.value}` : `--${o.name}`;
        return o.required ? text : `[${text}]`;
      })].join(' ')}`);
      for (const option of command.options) expect(stdout).toContain(option.summary);
    }
  });

  it('refuses an unknown option or a missing one with exit 2, naming it, and nothing on stdout', async () => {
    const unknown = await failing(['org:list', '--verbose']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('org:list has no option --verbose');
    const missing = await failing(['apikey:list']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--org is required');
  });

  it('org:create --with-key returns a working API key; org:list and apikey:list show them, never the token', async () => {
    const email = `first-${process.pid}-${Date.now()}@example.test`;
    const created = JSON.parse(
      (await cli(['org:create', '--name', 'First Co', '--owner-email', email, '--owner-password', 'owner-password-1', '--with-key'])).stdout,
    );
    expect(created).toEqual({
      organization: { id: expect.stringMatching(/^org_/), name: 'First Co' },
      user: { id: expect.stringMatching(/^usr_/), organizationId: created.organization.id, email, role: 'owner' },
      apiKey: { id: expect.stringMatching(/^key_/), name: 'first key', token: expect.stringMatching(/^gwk_/), permissions: ['*'] },
    });
    expect((await api.http().get('/api/v1/sessions').set(bearer(created.apiKey.token))).status).toBe(200);
    expect((await api.http().get('/api/v1/webhooks').set(bearer(created.apiKey.token))).status).toBe(200);

    const orgs = JSON.parse((await cli(['org:list'])).stdout).organizations;
    expect(orgs).toContainEqual({ id: created.organization.id, name: 'First Co', createdAt: expect.any(String) });

    const second = JSON.parse((await cli(['apikey:create', '--org', created.organization.id, '--name', 'ci', '--permissions', 'sessions:read'])).stdout);
    await cli(['apikey:revoke', '--id', second.id]);
    const listed = await cli(['apikey:list', '--org', created.organization.id]);
    expect(JSON.parse(listed.stdout).apiKeys).toEqual([
      { id: created.apiKey.id, name: 'first key', tokenHint: `${created.apiKey.token.slice(0, 8)}…`, permissions: ['*'], createdAt: expect.any(String), revokedAt: null },
      { id: second.id, name: 'ci', tokenHint: `${second.token.slice(0, 8)}…`, permissions: ['sessions:read'], createdAt: expect.any(String), revokedAt: expect.any(String) },
    ]);
    expect(listed.stdout).not.toContain(created.apiKey.token);
    expect(listed.stdout).not.toContain(second.token);
  });

  it('bootstrap creates the BOOTSTRAP_* organization with a key once, and changes nothing when run again', async () => {
    const env = {
      BOOTSTRAP_ORG_NAME: 'Boot Co',
      BOOTSTRAP_OWNER_EMAIL: `boot-${process.pid}-${Date.now()}@example.test`,
      BOOTSTRAP_OWNER_PASSWORD: 'boot-password-1',
    };
    const first = JSON.parse((await cli(['bootstrap'], env)).stdout);
    expect(first).toMatchObject({ bootstrapped: true, organization: { name: 'Boot Co' }, apiKey: { token: expect.stringMatching(/^gwk_/) } });
    expect((await api.http().get('/api/v1/sessions').set(bearer(first.apiKey.token))).status).toBe(200);
    const again = JSON.parse((await cli(['bootstrap'], env)).stdout);
    expect(again).toEqual({ bootstrapped: false, reason: `a user with email ${env.BOOTSTRAP_OWNER_EMAIL} exists` });
    const orgs = JSON.parse((await cli(['org:list'])).stdout).organizations.filter((o: { name: string }) => o.name === 'Boot Co');
    expect(orgs).toHaveLength(1);

    const partial = await cli(['bootstrap'], { BOOTSTRAP_ORG_NAME: 'Half Co' }).catch((e) => e);
    expect(partial.code).toBe(78);
    expect(partial.stderr.trim()).toBe('invalid configuration: BOOTSTRAP_OWNER_EMAIL is required when BOOTSTRAP_ORG_NAME is set');
  });
});
