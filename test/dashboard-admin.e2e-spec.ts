import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import puppeteer from 'puppeteer-core';
import { loadRunContext, REPO_ROOT } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:admin-ui-${process.pid}`;

import type { NestExpressApplication } from '@nestjs/platform-express';
import { createApiApp } from '../apps/api/src/bootstrap';
import { rabbitTap } from './support/brokers';
import { ChatwootStandin } from './support/chatwoot-standin';
import { AppProcess, freePort, startSimGateway, waitFor } from './support/processes';
import { startDispatcherProcess } from './support/receivers';
import { closeTestDataSource, SeededOrg, seedOrganization, seedStoppedSession } from './support/seed';
import { simControl } from './support/sim-control';
import { assertChromium, CHROMIUM } from './support/chromium';

const SHOTS = process.env.DASHBOARD_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs', 'dashboard') : join(REPO_ROOT, 'tmp', 'dashboard');
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, asserted field by field
type Json = any;
jest.setTimeout(120000);

/**
 * The dashboard's administration screens in a real headless Chromium against the real API, a gateway on the network
 * simulator, a dispatcher and the shared RabbitMQ: an event sink beside the webhooks with its delivery log and replay
 * (issue 41), members, invitations, API keys and the audit log (issue 40), campaigns (issue 43), and a session's Chatwoot
 * integration against the Chatwoot stand-in (issue 42).
 */
describe('dashboard administration screens in a headless browser', () => {
  let api: NestExpressApplication;
  let baseUrl: string;
  let sim: AppProcess;
  let simUrl: string;
  let gateway: AppProcess;
  let dispatcher: AppProcess;
  let rabbit: Awaited<ReturnType<typeof rabbitTap>>;
  let org: SeededOrg;
  let browser: Browser;
  let page: Page;
  let sessionId: string;
  const pageErrors: string[] = [];
  const network = simControl(() => simUrl);
  const tag = `${process.pid}`;

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const textOf = (selector: string, p = page) => p.$eval(selector, (el) => el.textContent ?? '');
  const valueOf = (selector: string, p = page) => p.$eval(selector, (el) => (el as unknown as { value: string }).value);
  const apiCall = async (method: string, path: string, body?: object, token = org.adminKey) => {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (res.status === 204 ? null : await res.json()) as Json };
  };
  const clickButton = async (label: string, scope = 'body', p = page) => (await p.waitForSelector(`${scope} button:not([disabled])::-p-text("${label}")`, { visible: true }))!.click();
  const open = async (hash: string, marker: string) => {
    await page.goto(`${baseUrl}/dashboard/#/${hash}`);
    await page.waitForSelector(marker);
  };
  /** At phone width: no sideways scroll and every visible button of the screen inside the viewport. */
  const fitsPhone = async (name: string) => {
    await page.setViewport({ width: 390, height: 844 });
    expect(await page.evaluate('document.scrollingElement.scrollWidth')).toBeLessThanOrEqual(390);
    const offscreen = await page.evaluate(`[...document.querySelectorAll('main button')]
      .filter((el) => el.offsetParent !== null)
      .filter((el) => { const r = el.getBoundingClientRect(); return r.left < 0 || r.right > innerWidth + 0.5; })
      .map((el) => el.textContent)`);
    expect(offscreen).toEqual([]);
    await shot(`${name}-390`);
    await page.setViewport({ width: 1280, height: 820 });
  };

  beforeAll(async () => {
    assertChromium();
    mkdirSync(SHOTS, { recursive: true });
    ({ sim, simUrl, gateway } = await startSimGateway(`gw-admin-ui-${process.pid}`));
    process.env.NETWORK_SIM_URL = simUrl;
    [dispatcher, rabbit] = await Promise.all([startDispatcherProcess(), rabbitTap(`dashboard-admin-${tag}`)]);
    api = await createApiApp();
    const port = await freePort();
    await api.listen(port, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${port}`;
    org = await seedOrganization('Admin Co');
    // a working session: campaigns send through it, API keys are scoped to it
    const created = await apiCall('POST', '/sessions', { label: 'Sales line' });
    expect(created.status).toBe(201);
    sessionId = created.body.id;
    await waitFor(async () => (await network.post(`/sim/sessions/${sessionId}/scan`, { phoneNumber: `1555009${tag.slice(-4).padStart(4, '0')}` })).status === 200, 30000, 'the QR scan');
    await waitFor(async () => (await apiCall('GET', `/sessions/${sessionId}`)).body.status === 'working', 30000, 'working');
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 820 });
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.on('dialog', (d) => void d.accept());
    page.setDefaultTimeout(30000);
    // the owner, signed in (a login JWT: only a person may make owners or change a password)
    await page.goto(`${baseUrl}/dashboard/`);
    await page.evaluate(`sessionStorage.setItem('gw.token', ${JSON.stringify(org.users.owner.token)})`);
    await page.reload();
    await page.waitForSelector('nav.top a[href="#/organization"]');
  }, 120000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await dispatcher?.stop();
    await gateway?.stop();
    await sim?.stop();
    await rabbit?.drop();
    await closeTestDataSource();
  });

  it('creates a RabbitMQ event sink beside the webhooks, test-fires it, shows its delivery and replays it', async () => {
    await open('webhooks', 'table[data-testid=event-sinks] ::-p-text("No event sinks yet")');
    await clickButton('New event sink');
    await page.type('input[name=sinkUrl]', 'amqp://guest:guest@127.0.0.1:5672/');
    await page.type('input[name=exchange]', rabbit.exchange);
    await page.type('input[name=routingKey]', 'wa.{event}');
    await clickButton('Create event sink');
    await page.waitForFunction('/^#\\/event-sinks\\/\\w+_/.test(location.hash)');
    const sinkId = decodeURIComponent(String(await page.evaluate('location.hash')).split('/')[2]);
    // the broker's password never comes back
    await page.waitForSelector('dl.facts dd::-p-text("amqp://guest:***@127.0.0.1:5672/")');
    await page.waitForSelector('table[data-testid=deliveries] ::-p-text("No deliveries yet")');

    await clickButton('Send test event');
    await page.waitForSelector('p.ok::-p-text("delivery dlv_")');
    const [, eventId, deliveryId] = (await textOf('p.ok')).match(/event (\S+) queued as delivery (dlv_[0-9A-Za-z]+)/)!;
    const row = `tr[data-delivery-id="${deliveryId}"]`;
    await page.waitForSelector(`${row} [data-status=delivered]`);
    expect(await textOf(row)).toContain('webhook.test');
    await page.waitForSelector('figure.chart[data-chart-delivered="1"]');
    // published once, confirmed, with the event id as the AMQP messageId
    await waitFor(() => rabbit.messages.length === 1, 10000, 'the message on RabbitMQ');
    expect(rabbit.messages[0].fields.routingKey).toBe('wa.webhook.test');
    expect(rabbit.messages[0].properties.messageId).toBe(eventId);

    await clickButton('Replay', row);
    await page.waitForSelector(`${row}[data-attempts="2"] [data-status=delivered]`);
    await page.waitForSelector(`[data-attempts-of="${deliveryId}"] tr[data-attempt-no="2"]`);
    await waitFor(() => rabbit.messages.length === 2, 10000, 'the replay on RabbitMQ');
    expect(rabbit.messages.map((m) => m.properties.messageId)).toEqual([eventId, eventId]);
    await shot('event-sink');
    await fitsPhone('event-sink');

    // listed beside the webhooks
    await open('webhooks', `tr[data-sink-id="${sinkId}"]`);
    expect(await textOf(`tr[data-sink-id="${sinkId}"]`)).toContain(`${rabbit.exchange} · wa.{event}`);
    expect(pageErrors).toEqual([]);
  });

  it('invites a member who accepts from the link, and then sees no management the role lacks; the owner changes the role', async () => {
    const email = `ana.${tag}@example.test`;
    await open('organization/members', 'table[data-testid=invitations] ::-p-text("No pending invitations")');
    await page.type('input[name=inviteEmail]', email);
    await page.select('select[name=inviteRole]', 'member');
    await clickButton('Invite');
    const shown = await page.waitForSelector('[data-shown-once] input');
    const link = new URL(await shown!.evaluate((el) => (el as unknown as { value: string }).value));
    expect(link.pathname).toBe('/dashboard/accept-invitation');
    await page.waitForSelector(`table[data-testid=invitations] ::-p-text("${email}")`);
    await shot('organization-members');
    await fitsPhone('organization-members');

    // the invitee, in a browser of their own, opens the link (on this test's API) and signs up
    const invitee = await browser.createBrowserContext();
    try {
      const p = await invitee.newPage();
      p.on('pageerror', (err) => pageErrors.push(String(err)));
      await p.goto(`${baseUrl}${link.pathname}${link.search}`);
      await p.waitForSelector('form[aria-label="Accept invitation"]');
      await p.type('input[name=name]', 'Ana');
      await p.type('input[name=newPassword]', 'a long passphrase');
      await p.type('input[name=newPasswordAgain]', 'a long passphrase');
      await clickButton('Accept and sign in', 'body', p);
      await p.waitForSelector('nav.top a[href="#/organization"]');
      expect(await textOf('nav.top', p)).toContain('member ·');
      expect(new URL(p.url()).search).toBe(''); // the token left the address bar
      // a member holds no members:manage, apikeys:manage or audit:read: only their own password is offered
      await p.goto(`${baseUrl}/dashboard/#/organization`);
      await p.waitForSelector('form[aria-label="Change password"]');
      expect(await p.$$eval('nav.subnav a', (els) => els.map((el) => el.textContent))).toEqual(['Password']);
      expect(await p.$('main button::-p-text("Rename")')).toBeNull();
      // and no campaign form would be refused: a member may send
      await p.goto(`${baseUrl}/dashboard/#/campaigns/${sessionId}`);
      await p.waitForSelector('form[aria-label="New campaign"]');
      // nor webhook or sink forms the API would refuse
      await p.goto(`${baseUrl}/dashboard/#/webhooks`);
      await p.waitForSelector('[data-testid=webhooks-not-managed]');
      expect(await p.$('form[aria-label="New webhook"]')).toBeNull();
      // nor the Chatwoot form (webhooks:manage)
      await p.goto(`${baseUrl}/dashboard/#/sessions/${sessionId}`);
      await p.waitForSelector('[data-testid=integrations-not-managed]');
      expect(await p.$('form[aria-label="Connect Chatwoot"]')).toBeNull();
    } finally {
      await invitee.close();
    }

    // the owner sees the new member (the invitation consumed) and makes them a viewer
    await page.reload();
    const memberRow = `tr[data-member-email="${email}"]`;
    await page.waitForSelector(memberRow);
    expect(await textOf(memberRow)).toContain('Ana');
    await page.waitForSelector('table[data-testid=invitations] ::-p-text("No pending invitations")');
    await page.select(`${memberRow} select[name=role]`, 'viewer');
    await waitFor(async () => (await apiCall('GET', '/members')).body.data.find((m: Json) => m.email === email)?.role === 'viewer', 10000, 'the role changed');
    // the last owner cannot be demoted: the API's 409 is shown, and the select shows what was kept
    const ownerRow = `tr[data-member-email="${org.users.owner.email}"]`;
    await page.select(`${ownerRow} select[name=role]`, 'admin');
    await page.waitForSelector('p.error::-p-text("the last owner cannot be demoted")');
    expect(await valueOf(`${ownerRow} select[name=role]`)).toBe('owner');
    // removed (after the confirm): gone from the list and the API
    await clickButton('Remove', memberRow);
    await waitFor(async () => (await page.$(memberRow)) === null, 10000, 'the row gone');
    expect((await apiCall('GET', '/members')).body.data.map((m: Json) => m.email)).not.toContain(email);
    expect(pageErrors).toEqual([]);
  });

  it('creates an API key with scopes, one session and an IP allow-list: shown once, listed, confined; the audit log has it; revoked', async () => {
    const other = await seedStoppedSession(org.id, 'Other line');
    await open('organization/api-keys', `fieldset[data-testid=key-sessions] input[value="${sessionId}"]`);
    await page.type('input[name=keyName]', 'crm-sync');
    await page.click('fieldset[data-testid=key-permissions] input[value="sessions:read"]');
    await page.click('fieldset[data-testid=key-permissions] input[value="messages:send"]');
    await page.click(`fieldset[data-testid=key-sessions] input[value="${sessionId}"]`);
    await page.type('textarea[name=allowedIps]', '127.0.0.1/32, ::1');
    await clickButton('Create API key');
    const token = await (await page.waitForSelector('[data-shown-once] input'))!.evaluate((el) => (el as unknown as { value: string }).value);
    expect(token).toMatch(/^gwk_/);
    const keyCell = await page.waitForSelector('table[data-testid=api-keys] tr[data-key-id] ::-p-text("crm-sync")');
    const [keyId, row] = await keyCell!.evaluate((el) => [el.closest('tr')!.getAttribute('data-key-id')!, el.closest('tr')!.textContent ?? '']);
    expect(row).toContain('messages:send, sessions:read');
    expect(row).toContain(sessionId);
    expect(row).toContain('127.0.0.1/32, ::1');
    expect(row).toContain(token.slice(0, 8));
    expect(row).not.toContain(token);
    await shot('api-keys');
    await fitsPhone('api-keys');

    // the key reaches its session only, and nothing it was not given
    const sessions = await apiCall('GET', '/sessions', undefined, token);
    expect(sessions.status).toBe(200);
    expect(sessions.body.data.map((s: Json) => s.id)).toEqual([sessionId]);
    expect((await apiCall('GET', `/sessions/${other.id}`, undefined, token)).status).toBe(404);
    expect((await apiCall('GET', '/webhooks', undefined, token)).status).toBe(403);

    // the audit log, filtered by action
    await open('organization/audit', 'table[data-testid=audit-log] tr[data-audit-id]');
    await page.type('input[name=audit-action]', 'apikey.create');
    await clickButton('Filter');
    await waitFor(async () => (await page.$$eval('table[data-testid=audit-log] tr[data-audit-id]', (els) => els.map((el) => el.getAttribute('data-action')))).join() === 'apikey.create', 10000, 'only apikey.create');
    await shot('audit-log');
    await fitsPhone('audit-log');

    // revoked from its row: refused at once
    await open('organization/api-keys', 'table[data-testid=api-keys] ::-p-text("crm-sync")');
    await clickButton('Revoke', `tr[data-key-id="${keyId}"]`);
    await waitFor(async () => (await page.$(`tr[data-key-id="${keyId}"]`)) === null, 10000, 'the row gone');
    expect((await apiCall('GET', '/sessions', undefined, token)).status).toBe(401);
    expect(pageErrors).toEqual([]);
  });

  it('starts a campaign from an uploaded CSV and follows its progress to the end; pauses, resumes and cancels another', async () => {
    const numbers = [1, 2, 3].map((i) => `1555008${tag.slice(-3).padStart(3, '0')}${i}`);
    // two of the three are on WhatsApp; the third is skipped (skipNotOnWhatsApp, the default)
    for (const n of numbers.slice(0, 2)) expect((await network.post('/sim/contacts', { phoneNumber: n, name: `C${n}` })).status).toBe(200);
    await open(`campaigns/${sessionId}`, 'table[data-testid=campaigns] ::-p-text("No campaigns on this session yet")');
    await fitsPhone('campaigns');
    await page.type('input[name=campaignName]', 'Restock');
    await page.type('textarea[name=campaignText]', 'Hi {{name}}, order {{order}} is ready');
    const csv = join(tmpdir(), `dashboard-recipients-${tag}.csv`);
    writeFileSync(csv, `to,name,order\n${numbers[0]},Ana,A-1\n${numbers[1]},Bo,B-2\n${numbers[2]},Cy,C-3\n`);
    await (await page.$('input[name=recipientsFile]'))!.uploadFile(csv);
    await page.waitForFunction(`document.querySelector('textarea[name=recipientsCsv]').value.includes('Cy,C-3')`);
    for (const [field, value] of [['minDelay', '0'], ['maxDelay', '0.2']]) {
      await page.click(`input[name=${field}]`, { count: 3 });
      await page.type(`input[name=${field}]`, value);
    }
    await page.click('input[name=typing]');
    await clickButton('Start campaign');
    await page.waitForFunction('/^#\\/campaigns\\/[^/]+\\/cmp_/.test(location.hash)');
    const campaignId = decodeURIComponent(String(await page.evaluate('location.hash')).split('/')[3]);
    await page.waitForSelector('[data-testid=campaign][data-campaign-status=completed][data-done="3"]', { timeout: 60000 });
    await page.waitForSelector(`tr[data-recipient^="${numbers[2]}"][data-recipient-status=skipped]`);
    for (const n of numbers.slice(0, 2)) await page.waitForSelector(`tr[data-recipient^="${n}"]:is([data-recipient-status=sent],[data-recipient-status=delivered],[data-recipient-status=read])`);
    const view = (await apiCall('GET', `/sessions/${sessionId}/campaigns/${campaignId}`)).body;
    expect(view.counts).toMatchObject({ total: 3, pending: 0, skipped: 1, failed: 0 });
    expect(view.counts.sent + view.counts.delivered + view.counts.read).toBe(2);
    const texts = (await apiCall('GET', `/sessions/${sessionId}/messages?limit=20`)).body.data.map((m: Json) => m.text);
    expect(texts).toEqual(expect.arrayContaining(['Hi Ana, order A-1 is ready', 'Hi Bo, order B-2 is ready']));
    // the status filter
    await page.select('select[name=recipientStatus]', 'skipped');
    await waitFor(async () => (await page.$$('table[data-testid=recipients] tr[data-recipient]')).length === 1, 10000, 'one skipped recipient');
    await shot('campaign');
    await fitsPhone('campaign');

    // a slow one (a minute between messages): paused, resumed, cancelled from its page
    const slow = await apiCall('POST', `/sessions/${sessionId}/campaigns`, {
      name: 'Slow', message: { text: 'Hello' }, recipients: numbers.slice(0, 2).map((to) => ({ to })), pacing: { minDelayMs: 60000, maxDelayMs: 60000, typing: false },
    });
    expect(slow.status).toBe(201);
    await open(`campaigns/${sessionId}`, `tr[data-campaign-id="${slow.body.id}"]`);
    await page.click(`tr[data-campaign-id="${slow.body.id}"] a`);
    await page.waitForSelector('[data-testid=campaign][data-campaign-status=running]');
    await clickButton('Pause');
    await page.waitForSelector('[data-testid=campaign][data-campaign-status=paused]');
    await clickButton('Resume');
    await page.waitForSelector('[data-testid=campaign][data-campaign-status=running]');
    await clickButton('Cancel campaign');
    await page.waitForSelector('[data-testid=campaign][data-campaign-status=cancelled]');
    expect(await page.$('main button::-p-text("Pause")')).toBeNull();
    expect((await apiCall('GET', `/sessions/${sessionId}/campaigns/${slow.body.id}`)).body.status).toBe('cancelled');
    expect(pageErrors).toEqual([]);
  });

  it('the reset link sets a new password for a logged-out member; without a token the page says who makes one', async () => {
    const p = await (await browser.createBrowserContext()).newPage();
    try {
      await p.goto(`${baseUrl}/dashboard/`);
      await (await p.waitForSelector('a::-p-text("Forgot your password?")'))!.click();
      await p.waitForSelector('section[aria-label="Forgot password"] ::-p-text("Reset password")');
      // the owner makes the link on the member's row; it is shown once
      await open('organization/members', `tr[data-member-id="${org.users.member.id}"]`);
      // the screen's reads (members, invitations) re-render the row: click once both have answered (a row in each
      // table; the invitations' may be its empty line). Not waitForNetworkIdle: the screen's traffic is not always idle.
      await page.waitForSelector('[data-testid=invitations] tbody tr');
      await clickButton('Reset password', `tr[data-member-id="${org.users.member.id}"]`);
      const link = new URL(await (await page.waitForSelector('[data-shown-once="Password reset link for ' + org.users.member.email + '"] input'))!.evaluate((el) => (el as unknown as { value: string }).value));
      expect(link.pathname).toBe('/dashboard/reset-password');
      await p.goto(`${baseUrl}${link.pathname}${link.search}`);
      await p.type('input[name=newPassword]', 'another passphrase');
      await p.type('input[name=newPasswordAgain]', 'another passphrase!');
      await clickButton('Set password', 'body', p);
      await p.waitForSelector('p.error::-p-text("differ")');
      await p.click('input[name=newPasswordAgain]', { count: 3 });
      await p.type('input[name=newPasswordAgain]', 'another passphrase');
      await clickButton('Set password', 'body', p);
      await p.waitForSelector('p.ok::-p-text("Password changed")');
      const login = await fetch(`${baseUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: org.users.member.email, password: 'another passphrase' }) });
      expect(login.status).toBe(200);
      // the link was used: a second try is the API's 401, shown
      await p.goto(`${baseUrl}${link.pathname}${link.search}`);
      await p.type('input[name=newPassword]', 'third passphrase');
      await p.type('input[name=newPasswordAgain]', 'third passphrase');
      await clickButton('Set password', 'body', p);
      await p.waitForSelector('p.error::-p-text("the link is unknown, used, withdrawn or expired")');
    } finally {
      await p.browserContext().close();
    }
    expect(pageErrors).toEqual([]);
  });

  it('connects the session to Chatwoot from its page: a refusal shown, the webhook URL, a failing then a passing test, disconnected', async () => {
    const chatwoot = new ChatwootStandin();
    await chatwoot.start();
    try {
      await open(`sessions/${sessionId}`, 'form[aria-label="Connect Chatwoot"]');
      await page.type('input[name=chatwootBaseUrl]', chatwoot.url);
      await page.type('input[name=chatwootAccountId]', String(chatwoot.accountId));
      // an inbox the account does not have: the API cannot know, the test will say it
      await page.type('input[name=chatwootInboxId]', '99');
      // no token: the API's 422, in its words, and nothing connected
      await clickButton('Connect Chatwoot');
      await page.waitForSelector('p.error::-p-text("apiAccessToken is required when connecting Chatwoot")');
      expect((await apiCall('GET', `/sessions/${sessionId}/integrations/chatwoot`)).status).toBe(404);
      await page.type('input[name=chatwootToken]', chatwoot.token);
      await clickButton('Connect Chatwoot');
      await page.waitForSelector('[data-testid=chatwoot] dd[data-token]');
      const view = (await apiCall('GET', `/sessions/${sessionId}/integrations/chatwoot`)).body;
      expect(view).toMatchObject({ inboxId: 99, accountId: chatwoot.accountId, active: true, apiAccessToken: '***cdef' });
      expect(await textOf('[data-testid=chatwoot] dd[data-token]')).toBe('***cdef');
      // the URL to paste into Chatwoot, with where to paste it; the token never comes back
      expect(await valueOf('input[name=chatwootWebhookUrl]')).toBe(view.webhookUrl);
      expect(view.webhookUrl).toMatch(new RegExp(`/api/v1/integrations/chatwoot/${view.id}/webhook\\?secret=`));
      expect(await textOf('[data-testid=chatwoot-webhook-url]')).toContain('Settings → Inboxes → this inbox → Configuration → Webhook URL');
      expect(await page.content()).not.toContain(chatwoot.token);

      // the test reads inbox 99 through Chatwoot's API: refused, and the page says why
      await clickButton('Test connection');
      await page.waitForSelector('[data-test-outcome=error]');
      const lastError = (await apiCall('GET', `/sessions/${sessionId}/integrations/chatwoot`)).body.lastError;
      expect(lastError).toEqual(expect.any(String));
      expect(await textOf('[data-test-outcome=error]')).toContain(lastError);
      expect(await textOf('[data-testid=chatwoot-last-error]')).toContain(lastError);
      expect(chatwoot.requests).toContainEqual(expect.objectContaining({ method: 'GET', path: expect.stringMatching(/\/inboxes\/99$/) }));

      // edited to the right inbox (the token kept): the next test clears the error
      await clickButton('Edit');
      await page.click('input[name=chatwootInboxId]', { count: 3 });
      await page.type('input[name=chatwootInboxId]', String(chatwoot.inboxId));
      await clickButton('Save', 'form[aria-label="Edit Chatwoot"]');
      await page.waitForSelector(`[data-testid=chatwoot] dd::-p-text("inbox ${chatwoot.inboxId}")`);
      expect((await apiCall('GET', `/sessions/${sessionId}/integrations/chatwoot`)).body).toMatchObject({ inboxId: chatwoot.inboxId, apiAccessToken: '***cdef' });
      await clickButton('Test connection');
      await page.waitForSelector('[data-testid=chatwoot][data-last-error=""] [data-testid=chatwoot-last-error] ::-p-text("none")');
      expect((await apiCall('GET', `/sessions/${sessionId}/integrations/chatwoot`)).body.lastError).toBeNull();
      expect(chatwoot.requests).toContainEqual(expect.objectContaining({ method: 'GET', path: expect.stringMatching(new RegExp(`/inboxes/${chatwoot.inboxId}$`)) }));
      await shot('chatwoot');
      await fitsPhone('chatwoot');

      // disconnected after the confirm: the form again, and the API has none
      await clickButton('Disconnect');
      await page.waitForSelector('form[aria-label="Connect Chatwoot"]');
      expect((await apiCall('GET', `/sessions/${sessionId}/integrations/chatwoot`)).status).toBe(404);
      expect(pageErrors).toEqual([]);
    } finally {
      await chatwoot.close();
    }
  });
});
