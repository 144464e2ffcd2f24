import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import puppeteer from 'puppeteer-core';
import { loadRunContext, REPO_ROOT } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:labels-ui-${process.pid}`;

import type { NestExpressApplication } from '@nestjs/platform-express';
import { createApiApp } from '../apps/api/src/bootstrap';
import { AppProcess, freePort, startSimGateway, waitFor } from './support/processes';
import { closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { simControl } from './support/sim-control';
import { assertChromium, CHROMIUM } from './support/chromium';

const SHOTS = process.env.DASHBOARD_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs', 'dashboard') : join(REPO_ROOT, 'tmp', 'dashboard');
const CONTACT = '15550008101';
const CONTACT_JID = `${CONTACT}@s.whatsapp.net`;
jest.setTimeout(90000);

/**
 * WhatsApp Business labels on the dashboard's inbox (issue 21 item 5) in a real headless Chromium against the real API,
 * a gateway and the network simulator: the operator labels a chat from the thread's header and the chip shows in the
 * chat list, the account (the simulator) and `GET …/chats` carry it; the phone renaming or deleting a label shows live;
 * a personal account's inbox says why it has no labels.
 */
describe('dashboard inbox labels in a headless browser', () => {
  let api: NestExpressApplication;
  let baseUrl: string;
  let sim: AppProcess;
  let simUrl: string;
  let gateway: AppProcess;
  let org: SeededOrg;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const network = simControl(() => simUrl);
  const click = async (selector: string) => (await page.waitForSelector(selector, { visible: true }))!.click();
  const authed = (path: string, init: RequestInit = {}) =>
    fetch(`${baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${org.adminKey}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const chatRow = `button.chat[data-chat-jid="${CONTACT_JID}"]`;
  // the label checkboxes, once no change is under way (the fieldset is disabled meanwhile)
  const picker = `fieldset[data-labels-for="${CONTACT_JID}"]:not([disabled])`;
  const chipsOf = () => page.$$eval(`${chatRow} .label-chip`, (els) => els.map((el) => `${el.getAttribute('data-label-id')}:${el.textContent}`));
  const storedLabels = async (sessionId: string) => {
    const chats = ((await (await authed(`/api/v1/sessions/${sessionId}/chats`)).json()) as { data: Array<{ jid: string; labels: string[] }> }).data;
    return chats.find((c) => c.jid === CONTACT_JID)?.labels ?? null;
  };
  const eventually = <T>(read: () => Promise<T>, expected: T, what: string) =>
    waitFor(async () => JSON.stringify(await read()) === JSON.stringify(expected), 15000, what);

  /** A session paired on the network (business or not) that the contact wrote to. */
  const pairedSession = async (label: string, phoneNumber: string, isBusiness: boolean) => {
    const created = await authed('/api/v1/sessions', { method: 'POST', body: JSON.stringify({ label }) });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: string }).id;
    await waitFor(async () => (await network.post(`/sim/sessions/${id}/scan`, { phoneNumber, isBusiness })).status === 200, 30000, 'the QR scan');
    await waitFor(async () => ((await (await authed(`/api/v1/sessions/${id}`)).json()) as { status: string }).status === 'working', 30000, 'working');
    expect((await network.post(`/sim/sessions/${id}/inbound`, { from: CONTACT, text: 'Can I order 3 more?' })).status).toBe(200);
    await waitFor(async () => (await storedLabels(id)) !== null, 15000, 'the chat stored');
    return id;
  };
  const openChat = async (sessionId: string) => {
    await page.goto(`${baseUrl}/dashboard/#/sessions/${sessionId}/inbox/${encodeURIComponent(CONTACT_JID)}`);
    await page.waitForSelector(chatRow, { visible: true });
    await page.waitForSelector('li.bubble.in ::-p-text("Can I order 3 more?")');
  };

  beforeAll(async () => {
    assertChromium();
    mkdirSync(SHOTS, { recursive: true });
    ({ sim, simUrl, gateway } = await startSimGateway(`gw-labels-ui-${process.pid}`));
    process.env.NETWORK_SIM_URL = simUrl;
    api = await createApiApp();
    const port = await freePort();
    await api.listen(port, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${port}`;
    org = await seedOrganization('Labels Co');
    expect((await network.post('/sim/contacts', { phoneNumber: CONTACT, name: 'Grace' })).status).toBe(200);
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 760 });
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.setDefaultTimeout(30000);
    await page.goto(`${baseUrl}/dashboard/#/sessions`);
    await page.evaluate(`sessionStorage.setItem('gw.token', ${JSON.stringify(org.adminKey)})`);
    await page.reload();
    await page.waitForSelector('table[data-testid=sessions]');
  }, 120000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await gateway?.stop();
    await sim?.stop();
    await closeTestDataSource();
  });

  it('labels a chat of a business account from the thread header: the chip shows, the account and the API carry it; removing it clears all three', async () => {
    const sessionId = await pairedSession('Shop line', '15550008201', true);
    await openChat(sessionId);
    expect(await page.$(`${chatRow} .label-chip`)).toBeNull();
    await click('[data-labels-toggle]');
    // the account's labels, each a checkbox (WhatsApp Business's five to start with)
    await page.waitForSelector(`[data-labels-for="${CONTACT_JID}"] input[value="5"]`);
    await click(`${picker} input[value="2"]`);
    await page.waitForSelector(`${chatRow} .label-chip[data-label-id="2"]`);
    await click(`${picker} input[value="4"]`);
    await page.waitForSelector(`${chatRow} .label-chip[data-label-id="4"]`);
    expect(await chipsOf()).toEqual(['2:New order', '4:Paid']);
    await eventually(async () => (await network.get(`/sim/sessions/${sessionId}/labels`)).chats, { [CONTACT_JID]: ['2', '4'] }, 'the labels on the account');
    await eventually(() => storedLabels(sessionId), ['2', '4'], 'GET …/chats with the labels');
    // the chips survive a reload: they come from the stored chat, not the page's memory
    await page.reload();
    await page.waitForSelector(`${chatRow} .label-chip[data-label-id="4"]`);
    expect(await chipsOf()).toEqual(['2:New order', '4:Paid']);
    await click('[data-labels-toggle]');
    await page.waitForSelector(`[data-labels-for="${CONTACT_JID}"] input[value="2"]:checked`);
    await page.screenshot({ path: join(SHOTS, 'inbox-labels.png'), fullPage: true });

    // the phone renames one label and deletes the other: the inbox follows live
    expect((await network.post(`/sim/sessions/${sessionId}/labels`, { id: '2', name: 'Rush order' })).status).toBe(200);
    await page.waitForSelector(`${chatRow} .label-chip[data-label-id="2"] ::-p-text("Rush order")`);
    expect((await network.post(`/sim/sessions/${sessionId}/labels`, { id: '4', deleted: true })).status).toBe(200);
    await waitFor(async () => JSON.stringify(await chipsOf()) === JSON.stringify(['2:Rush order']), 15000, 'the deleted label gone from the chat list');
    await eventually(() => storedLabels(sessionId), ['2'], 'GET …/chats without the deleted label');

    // unchecking removes it on the account
    await click(`${picker} input[value="2"]:checked`);
    await waitFor(async () => (await page.$(`${chatRow} .label-chip`)) === null, 15000, 'no chip left');
    await eventually(async () => (await network.get(`/sim/sessions/${sessionId}/labels`)).chats, {}, 'no label on the account');
    await eventually(() => storedLabels(sessionId), [], 'GET …/chats without labels');
    expect(pageErrors).toEqual([]);
  });

  it("a personal account's inbox says labels are a WhatsApp Business feature, and changes nothing", async () => {
    const sessionId = await pairedSession('Personal line', '15550008202', false);
    await openChat(sessionId);
    await click('[data-labels-toggle]');
    const note = await page.waitForSelector('[data-labels-unavailable]');
    expect(await note!.evaluate((el) => el.textContent)).toContain('WhatsApp Business feature');
    expect(await page.$('[data-labels-for] input')).toBeNull();
    expect(await chipsOf()).toEqual([]);
    expect(await storedLabels(sessionId)).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
