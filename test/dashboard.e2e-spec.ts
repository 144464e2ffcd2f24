import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import puppeteer from 'puppeteer-core';
import { loadRunContext, REPO_ROOT } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:dashboard-${process.pid}`;

import type { NestExpressApplication } from '@nestjs/platform-express';
import { createApiApp } from '../apps/api/src/bootstrap';
import { AppProcess, freePort, startSimGateway, waitFor } from './support/processes';
import { Receiver, startDispatcherProcess, startReceiver } from './support/receivers';
import { closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { assertChromium, CHROMIUM } from './support/chromium';

// DASHBOARD_SCREENSHOTS=1 refreshes the committed screenshots in docs/; otherwise they go to tmp/
const SHOTS = process.env.DASHBOARD_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs', 'dashboard') : join(REPO_ROOT, 'tmp', 'dashboard');
// the simulator rotates the QR this often, so the test sees the dashboard swap in a new one
const QR_INTERVAL_MS = 2500;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, asserted field by field
type Json = any;
jest.setTimeout(150000);

/**
 * The dashboard in a real headless Chromium against the real API (listening on a port), a gateway on the network
 * simulator, a dispatcher and a webhook receiver: the story an operator lives through on the first day.
 */
describe('dashboard in a headless browser', () => {
  let api: NestExpressApplication;
  let baseUrl: string;
  let sim: AppProcess;
  let simUrl: string;
  let gateway: AppProcess;
  let dispatcher: AppProcess;
  let receiver: Receiver;
  let org: SeededOrg;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const gatewayId = `gw-dashboard-${process.pid}`;
  let sessionId: string;
  let secondSessionId: string;
  let webhookId: string;

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const textOf = (selector: string) => page.$eval(selector, (el) => el.textContent ?? '');
  // at phone width nothing may make the page scroll sideways: a wide table scrolls inside its card
  const PHONE = { width: 390, height: 844 };
  const pageWidth = () => page.evaluate('document.scrollingElement.scrollWidth') as Promise<number>;
  const apiCall = async (method: string, path: string, body?: object) => {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${org.adminKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (res.status === 204 ? null : await res.json()) as Json };
  };
  // as a person edits a field: select what is there, delete it, type (each step an input event the app sees)
  const setField = async (selector: string, value: string) => {
    await page.click(selector, { count: 3 });
    await page.keyboard.press('Backspace');
    if (value) await page.type(selector, value);
  };
  // every button and button-like link on screen lies inside the viewport: reachable without sideways scrolling
  const offscreenActions = () =>
    page.evaluate(`[...document.querySelectorAll('main button, main a.button')]
      .filter((el) => el.offsetParent !== null)
      .filter((el) => { const r = el.getBoundingClientRect(); return r.left < 0 || r.right > innerWidth + 0.5; })
      .map((el) => el.textContent)`) as Promise<string[]>;
  const clickButton = async (label: string, scope = 'body') => {
    const handle = await page.waitForSelector(`${scope} button::-p-text("${label}")`, { visible: true });
    await handle!.click();
  };

  beforeAll(async () => {
    assertChromium();
    mkdirSync(SHOTS, { recursive: true });
    ({ sim, simUrl, gateway } = await startSimGateway(gatewayId, {
      sim: { SIM_QR_INTERVAL_MS: String(QR_INTERVAL_MS) },
      // QRs rotate fast here; a slow test machine must not run the session into `failed` before the scan
      gateway: { QR_MAX_RETRIES: '50' },
    }));
    receiver = await startReceiver();
    dispatcher = await startDispatcherProcess();
    // the API streams inbound media from the network: this test's simulator, not the default port
    process.env.NETWORK_SIM_URL = simUrl;
    api = await createApiApp();
    const port = await freePort();
    await api.listen(port, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${port}`;
    org = await seedOrganization('Dashboard Co');
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 820 });
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.setDefaultTimeout(30000);
  }, 90000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await dispatcher?.stop();
    await gateway?.stop();
    await sim?.stop();
    await receiver?.close();
    await closeTestDataSource();
  });

  it('is served by the API: / redirects, hashed assets cache for good, screens fall back to index.html', async () => {
    const root = await fetch(`${baseUrl}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/dashboard/');
    const index = await fetch(`${baseUrl}/dashboard/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    const asset = html.match(/\/dashboard\/assets\/[\w.-]+\.js/)?.[0];
    expect(asset).toBeDefined();
    // everything is bundled: no script or stylesheet from another origin
    expect(html).not.toMatch(/(src|href)="https?:/);
    const js = await fetch(baseUrl + asset);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const deep = await fetch(`${baseUrl}/dashboard/webhooks/whk_x`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toBe(html);
    expect((await fetch(`${baseUrl}/dashboard/assets/gone-1234.js`)).status).toBe(404);
    // the API keeps its own 404 envelope
    const unknown = await fetch(`${baseUrl}/api/v1/nothing-here`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('refuses a wrong password on the login screen and signs the owner in', async () => {
    await page.goto(`${baseUrl}/`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/');
    await page.waitForSelector('form[aria-label="Sign in"]');
    await shot('login');
    // a pasted API key is a secret: the field masks it
    await clickButton('API key');
    expect(await page.$eval('input[name=apiKey]', (el) => el.getAttribute('type'))).toBe('password');
    await clickButton('Email and password');
    await page.type('input[name=email]', org.users.owner.email);
    await page.type('input[name=password]', 'not-the-password');
    await page.click('button[type=submit]');
    await page.waitForSelector('.error[role=alert]');
    expect(await textOf('.error[role=alert]')).toMatch(/invalid|credentials|password/i);

    await page.$eval('input[name=password]', (el) => ((el as unknown as { value: string }).value = ''));
    await page.type('input[name=password]', org.users.owner.password);
    await page.click('button[type=submit]');
    // signed in, the Overview comes first: nothing yet
    await page.waitForSelector('[data-testid=overview] [data-count-status=working][data-count="0"]');
    await page.waitForSelector('[data-testid=failing-webhooks] ::-p-text("No webhook is failing")');
    await page.click('nav.top a[href="#/sessions"]');
    await page.waitForSelector('table[data-testid=sessions]');
    expect(await textOf('nav.top')).toContain(`owner · ${org.id}`);
    await page.waitForSelector('[data-live=open]');
    // a new organization's list says what to do instead of showing an empty table (once its read is answered)
    await page.waitForSelector('table[data-testid=sessions] tbody ::-p-text("No sessions yet")');
    expect(await page.$eval('link[rel=icon]', (el) => el.getAttribute('href'))).toMatch(/^data:image\/svg\+xml,/);
    // the token lives in the tab's sessionStorage only
    expect(await page.evaluate("sessionStorage.getItem('gw.token')")).toMatch(/^ey/);
    expect(await page.evaluate('localStorage.length')).toBe(0);
  });

  it('creates a session, shows its QR and swaps in each new one as auth.qr arrives', async () => {
    await page.type('input[name=label]', 'Support line');
    await clickButton('Create session');
    const row = await page.waitForSelector('tr[data-session-id]');
    sessionId = await row!.evaluate((el) => el.getAttribute('data-session-id')!);
    expect(sessionId).toMatch(/^ses_/);
    const qrImage = `[data-pairing="${sessionId}"] img[data-qr-version]`;
    const img = await page.waitForSelector(qrImage);
    // the element is there before its PNG is decoded: wait for the image, not only for the tag
    await page.waitForFunction(`document.querySelector(${JSON.stringify(qrImage)})?.complete === true`);
    expect(await img!.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(100);
    // the PNG the user looks at, as base64
    const shownQr = () =>
      page.$eval(qrImage, async (el) => {
        const bytes = new Uint8Array(await (await fetch((el as unknown as { src: string }).src)).arrayBuffer());
        return btoa(String.fromCharCode(...bytes));
      });
    const firstQr = await shownQr();
    // the simulator rotates the QR; the dashboard shows the new one when auth.qr arrives, without a reload
    await waitFor(async () => (await shownQr()) !== firstQr, QR_INTERVAL_MS * 8, 'the next QR on screen');
    expect(await textOf(`tr[data-session-id="${sessionId}"] [data-status]`)).toBe('scan qr code');
    // the gateway runs the simulator: the panel says how to play the phone, with this session's id
    expect(await textOf(`[data-pairing="${sessionId}"] [data-sim-scan]`)).toContain(`/sim/sessions/${sessionId}/scan`);
    await shot('sessions-qr');
  });

  it('shows the session working, live, once the QR is scanned', async () => {
    // a marker that a page load would wipe: the list must change by itself
    await page.evaluate('window.notReloaded = true');
    const scan = await fetch(`${simUrl}/sim/sessions/${sessionId}/scan`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumber: '15550004242' }),
    });
    expect(scan.status).toBe(200);
    await page.waitForSelector(`tr[data-session-id="${sessionId}"] [data-status=working]`);
    await page.waitForSelector(`tr[data-session-id="${sessionId}"] ::-p-text("+15550004242")`);
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    expect(await textOf(`[data-paired="${sessionId}"]`)).toContain('+15550004242');
    await shot('sessions');
  });

  it('sends a message from the session screen', async () => {
    await page.click(`tr[data-session-id="${sessionId}"] a`);
    await page.waitForSelector('input[name=to]');
    await page.waitForSelector('::-p-text("No messages yet")');
    await page.waitForSelector('::-p-text("No groups yet")');
    await page.type('input[name=to]', '15550009999');
    await page.type('input[name=text]', 'Hello from the dashboard');
    await clickButton('Send');
    const row = await page.waitForSelector('tr[data-message-id]');
    expect(await row!.evaluate((el) => el.textContent)).toContain('Hello from the dashboard');
    // accepted (queued), and possibly already sent by the time the row is read
    expect(['queued', 'sent']).toContain(await row!.evaluate((el) => el.querySelector('[data-status]')?.getAttribute('data-status')));
    // and it reaches the network, once
    const onNetwork = await waitFor(async () => {
      const sent = ((await (await fetch(`${simUrl}/sim/messages`)).json()) as { data: Array<{ text?: string }> }).data;
      const found = sent.filter((m) => m.text === 'Hello from the dashboard');
      return found.length ? found : null;
    }, 15000, 'the message on the simulator');
    expect(onNetwork).toHaveLength(1);

    // a contact sends a document: its row links to the bytes, opened in a new tab
    const inbound = await fetch(`${simUrl}/sim/sessions/${sessionId}/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: '15550007777', type: 'document', media: { mimetype: 'application/pdf', filename: 'invoice.pdf', size: 2048 } }),
    });
    expect(inbound.status).toBe(200);
    const link = await page.waitForSelector('[data-media-of] a::-p-text("invoice.pdf")');
    expect(await textOf('[data-media-of]')).toContain('2.0 kB');
    const tabsBefore = (await browser.pages()).length;
    await link!.click();
    // the bytes the tab shows: fetched with the token (a plain link could not carry it), the contact's 2048
    const mediaUrl = await page.waitForSelector('[data-media-of] a[data-media-url^="blob:"]');
    const bytes = await mediaUrl!.evaluate(async (el) => (await (await fetch(el.getAttribute('data-media-url')!)).arrayBuffer()).byteLength);
    expect(bytes).toBe(2048);
    await waitFor(async () => (await browser.pages()).length > tabsBefore, 10000, 'the media tab');
    for (const extra of (await browser.pages()).slice(tabsBefore)) await extra.close();
    await shot('session');
  });

  it('creates a webhook, test-fires it, shows the delivery with its attempt, replays it', async () => {
    await page.click('nav.top a[href="#/webhooks"]');
    await page.waitForSelector('form[aria-label="New webhook"]');
    await page.waitForSelector('table[data-testid=webhooks] ::-p-text("No webhooks yet")');
    await page.type('input[name=url]', `${receiver.url}/dashboard`);
    await page.$eval('input[name=events]', (el) => ((el as unknown as { value: string }).value = ''));
    await page.type('input[name=events]', 'message.received');
    await clickButton('Create webhook');
    await page.waitForFunction('/^#\\/webhooks\\/whk_/.test(location.hash)');
    webhookId = decodeURIComponent(String(await page.evaluate('location.hash')).split('/')[2]);

    await page.waitForSelector('table[data-testid=deliveries] ::-p-text("No deliveries yet")');
    await clickButton('Send test event');
    await page.waitForSelector('p.ok::-p-text("delivery dlv_")');
    const deliveryId = (await textOf('p.ok')).match(/dlv_[0-9A-Za-z]+/)![0];
    const row = `tr[data-delivery-id="${deliveryId}"]`;
    await page.waitForSelector(`${row} [data-status=delivered]`);
    expect(await textOf(row)).toContain('webhook.test');
    await clickButton('Attempts', row);
    await page.waitForSelector(`[data-attempts-of="${deliveryId}"] tr[data-attempt-no="1"]`);
    expect(await textOf(`[data-attempts-of="${deliveryId}"] tr[data-attempt-no="1"]`)).toContain('200');
    await page.waitForSelector('figure.chart[data-chart-delivered="1"]');
    await shot('webhook');

    await clickButton('Replay', row);
    await page.waitForSelector(`${row}[data-attempts="2"] [data-status=delivered]`);
    await page.waitForSelector(`[data-attempts-of="${deliveryId}"] tr[data-attempt-no="2"]`);
    const received = await waitFor(() => (receiver.at('/dashboard').length >= 2 ? receiver.at('/dashboard') : null), 10000, 'the replay');
    expect(received).toHaveLength(2);
    // the same event twice: a receiver dedupes on the request id
    expect(new Set(received.map((r) => r.headers['x-webhook-request-id'])).size).toBe(1);
    expect(received.map((r) => JSON.parse(r.rawBody.toString()).payload.webhookId)).toEqual([webhookId, webhookId]);

    await page.click('nav.top a[href="#/webhooks"]');
    await page.waitForSelector(`tr[data-webhook-id="${webhookId}"]`);
    await shot('webhooks');
  });

  it('shows the live event monitor and the gateway view', async () => {
    await page.click('nav.top a[href="#/events"]');
    await page.waitForSelector('tr[data-event="session.status"]');
    expect(await page.$$eval('tr[data-event]', (rows) => rows.map((r) => r.getAttribute('data-event')))).toEqual(
      expect.arrayContaining(['auth.qr', 'session.status', 'session.connected', 'webhook.test']),
    );
    await page.select('select[name=type]', 'auth.qr');
    expect(await page.$$eval('tr[data-event]', (rows) => [...new Set(rows.map((r) => r.getAttribute('data-event')))])).toEqual(['auth.qr']);
    await page.select('select[name=type]', '');
    await shot('events');

    await page.click('nav.top a[href="#/gateways"]');
    const gw = await page.waitForSelector(`tr[data-gateway-id="${gatewayId}"]`);
    expect(await gw!.evaluate((el) => el.textContent)).toContain('alive');
    await shot('gateways');
    expect(pageErrors).toEqual([]);
  });

  it("edits the session's settings: the API's refusal shows under each field and changes nothing; a valid change is saved", async () => {
    const form = `form[data-settings="${sessionId}"]`;
    await page.goto(`${baseUrl}/dashboard/#/sessions/${sessionId}`);
    await page.waitForSelector(form);
    await setField(`${form} input[name=ratePerMin]`, '0');
    await setField(`${form} input[name=proxyUrl]`, 'ftp://proxy.example:21');
    await clickButton('Save settings', form);
    // the API's 422, field by field (the form checks nothing itself: one validation, the API's)
    await page.waitForSelector(`${form} [data-field-error=ratePerMin]`);
    expect(await textOf(`${form} [data-field-error=ratePerMin]`)).toMatch(/ratePerMin/);
    expect(await textOf(`${form} [data-field-error=proxyUrl]`)).toMatch(/proxyUrl must be an http, https, socks/);
    expect((await apiCall('GET', `/sessions/${sessionId}`)).body).toMatchObject({ ratePerMin: 20, proxyUrl: null });
    await shot('session-settings-refused');

    await setField(`${form} input[name=ratePerMin]`, '30');
    await setField(`${form} input[name=proxyUrl]`, '');
    await page.click(`${form} input[name=autoRead]`);
    await page.click(`${form} input[name=rejectCalls]`);
    await page.select(`${form} select[name=syncHistory]`, 'recent');
    await clickButton('Save settings', form);
    await page.waitForSelector(`${form} [data-settings-saved]`);
    expect(await page.$$(`${form} [data-field-error]`)).toHaveLength(0);
    expect((await apiCall('GET', `/sessions/${sessionId}`)).body).toMatchObject({
      ratePerMin: 30,
      ratePerHour: 200,
      autoRead: false,
      rejectCalls: true,
      presenceTyping: false,
      syncHistory: 'recent',
      proxyUrl: null,
    });
    // what the form shows after a page load is what the API stored
    await page.reload();
    await page.waitForSelector(`${form} input[name=ratePerMin]`);
    expect(await page.$eval(`${form} input[name=ratePerMin]`, (el) => (el as unknown as { value: string }).value)).toBe('30');
    expect(await page.$eval(`${form} input[name=autoRead]`, (el) => (el as unknown as { checked: boolean }).checked)).toBe(false);
  });

  it('keeps one order for the session list: a new session stays where a reload puts it', async () => {
    await page.click('nav.top a[href="#/sessions"]');
    await page.waitForSelector(`tr[data-session-id="${sessionId}"]`);
    await page.type('input[name=label]', 'Second line');
    await clickButton('Create session');
    const order = () => page.$$eval('tr[data-session-id]', (rows) => rows.map((r) => r.getAttribute('data-session-id')));
    await page.waitForFunction('document.querySelectorAll("tr[data-session-id]").length === 2');
    const before = await order();
    secondSessionId = before.find((id) => id !== sessionId)!;
    expect(before).toEqual([sessionId, secondSessionId]);
    await page.reload();
    await page.waitForFunction('document.querySelectorAll("tr[data-session-id]").length === 2');
    expect(await order()).toEqual(before);
    // stopped, so the counts below do not depend on how long its QR waits
    await page.waitForSelector(`tr[data-session-id="${secondSessionId}"] button::-p-text("Stop")`);
    await clickButton('Stop', `tr[data-session-id="${secondSessionId}"]`);
    await page.waitForSelector(`tr[data-session-id="${secondSessionId}"] [data-status=stopped]`);
  });

  it('shows the organization at a glance on the Overview, live', async () => {
    // a webhook whose receiver is down: it fails now, with its error
    const closedPort = await freePort();
    const broken = await apiCall('POST', '/webhooks', { url: `http://127.0.0.1:${closedPort}/down`, retryPolicy: { policy: 'constant', delaySeconds: 60, attempts: 2 } });
    expect(broken.status).toBe(201);
    expect((await apiCall('POST', `/webhooks/${broken.body.id}:test`)).status).toBe(202);
    await waitFor(async () => ((await apiCall('GET', '/stats/overview')).body.failingWebhooks.length ? true : null), 20000, 'the webhook failing');

    await page.click('nav.top a[href="#/overview"]');
    const overview = '[data-testid=overview]';
    await page.waitForSelector(`${overview} [data-count-status=working][data-count="1"]`);
    await page.waitForSelector(`${overview} [data-count-status=stopped][data-count="1"]`);
    // what this test made: one text sent, one document received; the test event delivered (its replay is the same delivery)
    await page.waitForSelector(`${overview} [data-messages-received="1"][data-messages-sent="1"]`);
    await page.waitForSelector(`${overview} [data-deliveries-delivered="1"]`);
    const failing = await page.waitForSelector(`${overview} tr[data-failing-webhook="${broken.body.id}"]`);
    expect(await failing!.evaluate((el) => el.textContent)).toMatch(/ECONNREFUSED|connect/i);
    // drawn by the chart library (canvas), one per chart
    expect(await page.$$eval(`${overview} .hourly-chart canvas`, (els) => els.length)).toBe(2);

    // live: a contact writes while the Overview is open; the count follows without a page load
    await page.evaluate('window.notReloaded = true');
    const inbound = await fetch(`${simUrl}/sim/sessions/${sessionId}/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: '15550007777', text: 'still there?' }),
    });
    expect(inbound.status).toBe(200);
    await page.waitForSelector(`${overview} [data-messages-received="2"]`);
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    expect((await apiCall('DELETE', `/webhooks/${broken.body.id}`)).status).toBe(204);
    await shot('overview');
  });

  it('says why a session is not working, and what to do, on the list and on its page', async () => {
    await page.click('nav.top a[href="#/sessions"]');
    await page.waitForSelector(`tr[data-session-id="${sessionId}"] [data-status=working]`);
    // the phone unlinks the device: the row turns logged_out and says why, live
    expect((await fetch(`${simUrl}/sim/sessions/${sessionId}/unlink`, { method: 'POST' })).status).toBe(200);
    const reason = await page.waitForSelector(`tr[data-session-id="${sessionId}"] [data-reason="unlinked_on_phone"]`);
    expect(await textOf(`tr[data-session-id="${sessionId}"] [data-status]`)).toBe('logged out');
    expect(await reason!.$eval('[data-hint]', (el) => el.textContent)).toMatch(/scan a new QR/);
    // a page load has no event to learn it from: the session page reads the reason the API keeps on the row
    await page.goto(`${baseUrl}/dashboard/#/sessions/${sessionId}`);
    await page.waitForSelector('dl.facts [data-reason="unlinked_on_phone"] [data-hint]');
    await shot('session-logged-out');
  });

  it('fits a phone: no screen scrolls sideways at 390 px, the header wraps', async () => {
    await page.setViewport(PHONE);
    for (const screen of ['overview', 'sessions', `sessions/${sessionId}`, 'webhooks', `webhooks/${webhookId}`, 'events', 'gateways']) {
      await page.goto(`${baseUrl}/dashboard/#/${screen}`);
      await page.waitForSelector('main .panel');
      // each screen's data on it before measuring (the webhook page polls its log, so the network is never idle for long)
      const loaded: Record<string, string> = { overview: '[data-testid=overview]', sessions: 'tr[data-session-id]', webhooks: 'tr[data-webhook-id]', gateways: 'table[data-testid=gateways] tbody tr' };
      const marker = loaded[screen] ?? (screen.startsWith('sessions/') ? 'form[data-settings]' : screen.startsWith('webhooks/') ? 'tr[data-delivery-id]' : 'main .panel');
      await page.waitForSelector(marker);
      await page.waitForNetworkIdle({ idleTime: 300, timeout: 5000 }).catch(() => undefined);
      expect({ screen, overflow: Math.max(0, (await pageWidth()) - PHONE.width), offscreen: await offscreenActions() }).toEqual({ screen, overflow: 0, offscreen: [] });
      if (screen === 'overview') await shot('overview-390');
      if (screen === `webhooks/${webhookId}`) {
        // the delivery's actions sit on its card, on screen
        await page.waitForSelector('tr[data-delivery-id] button::-p-text("Replay")', { visible: true });
        expect(await offscreenActions()).toEqual([]);
        await shot('webhook-390');
      }
    }
    await page.goto(`${baseUrl}/dashboard/#/sessions`);
    await page.waitForSelector(`tr[data-session-id="${sessionId}"] [data-reason]`);
    // the header is taller than one line: it wrapped instead of pushing the page wider
    expect(await page.$eval('nav.top', (el) => el.getBoundingClientRect().height)).toBeGreaterThan(50);
    await shot('sessions-390');
    await page.click('nav.top a[href="#/webhooks"]');
    await page.waitForSelector('table[data-testid=webhooks] tr[data-webhook-id]');
    await shot('webhooks-390');
    await page.setViewport({ width: 1280, height: 820 });
  });

  it('sends the user back to the login screen when the API answers 401', async () => {
    await page.evaluate("sessionStorage.setItem('gw.token', 'gwk_revoked-or-made-up')");
    await page.click('nav.top a[href="#/sessions"]');
    await page.waitForSelector('form[aria-label="Sign in"]');
    expect(await page.evaluate("sessionStorage.getItem('gw.token')")).toBeNull();
  });
});
