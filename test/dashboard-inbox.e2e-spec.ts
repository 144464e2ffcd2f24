import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import puppeteer from 'puppeteer-core';
import { loadRunContext, REPO_ROOT } from './support/run-context';

// this file's own Redis namespace (per process: runs may overlap), so gateways of other e2e files never take its sessions
process.env.REDIS_KEY_PREFIX = `${loadRunContext().redisPrefix}:inbox-${process.pid}`;

import type { NestExpressApplication } from '@nestjs/platform-express';
import { createApiApp } from '../apps/api/src/bootstrap';
import { AppProcess, freePort, startSimGateway, waitFor } from './support/processes';
import { closeTestDataSource, SeededOrg, seedOrganization } from './support/seed';
import { simControl } from './support/sim-control';
import { assertChromium, CHROMIUM } from './support/chromium';

const SHOTS = process.env.DASHBOARD_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs', 'dashboard') : join(REPO_ROOT, 'tmp', 'dashboard');
const CONTACT = '15550007001';
const CONTACT_JID = `${CONTACT}@s.whatsapp.net`;
// a 1×1 PNG: an inline image the browser can decode
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
jest.setTimeout(90000);

/**
 * The dashboard's inbox (issue 20 item 5) in a real headless Chromium against the real API, a gateway and the network
 * simulator: a contact writes, the operator reads and answers with text, a poll and a voice note, sees the contact's
 * reaction, vote, edit and delete, and blocks the contact; on a phone-sized screen too.
 */
describe('dashboard inbox in a headless browser', () => {
  let api: NestExpressApplication;
  let baseUrl: string;
  let sim: AppProcess;
  let simUrl: string;
  let gateway: AppProcess;
  let org: SeededOrg;
  let browser: Browser;
  let page: Page;
  let sessionId: string;
  const pageErrors: string[] = [];
  const network = simControl(() => simUrl);
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const textOf = (selector: string) => page.$eval(selector, (el) => el.textContent ?? '');
  // screens load asynchronously: every click waits for its target to be shown
  const click = async (selector: string) => (await page.waitForSelector(selector, { visible: true }))!.click();
  const authed = (path: string, init: RequestInit = {}) =>
    fetch(`${baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${org.adminKey}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const sentToContact = async () =>
    ((await network.get(`/sim/messages?sessionId=${sessionId}`)).data as Array<Record<string, unknown>>).filter((m) => m.to === CONTACT_JID);
  const inbound = async (body: object) => {
    const res = await network.post(`/sim/sessions/${sessionId}/inbound`, { from: CONTACT, ...body });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  };
  const bubbleOf = (waMessageId: string, messages: Array<{ id: string; waMessageId: string }>) => {
    const m = messages.find((x) => x.waMessageId === waMessageId);
    return m ? `li.bubble[data-message-id="${m.id}"]` : null;
  };
  const logOfChat = async () =>
    ((await (await authed(`/api/v1/sessions/${sessionId}/chats/${CONTACT_JID}/messages?limit=50`)).json()) as { data: Array<{ id: string; waMessageId: string }> }).data;

  beforeAll(async () => {
    assertChromium();
    mkdirSync(SHOTS, { recursive: true });
    ({ sim, simUrl, gateway } = await startSimGateway(`gw-inbox-${process.pid}`));
    process.env.NETWORK_SIM_URL = simUrl;
    api = await createApiApp();
    const port = await freePort();
    await api.listen(port, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${port}`;
    org = await seedOrganization('Inbox Co');
    // the contact exists on the network with an about text
    expect((await network.post('/sim/contacts', { phoneNumber: CONTACT, name: 'Ada', about: 'Busy building' })).status).toBe(200);
    const created = await authed('/api/v1/sessions', { method: 'POST', body: JSON.stringify({ label: 'Inbox line', autoRead: false }) });
    expect(created.status).toBe(201);
    sessionId = ((await created.json()) as { id: string }).id;
    await waitFor(async () => (await network.post(`/sim/sessions/${sessionId}/scan`, { phoneNumber: '15550004343' })).status === 200, 30000, 'the QR scan');
    await waitFor(async () => ((await (await authed(`/api/v1/sessions/${sessionId}`)).json()) as { status: string }).status === 'working', 30000, 'working');
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 860 });
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.setDefaultTimeout(30000);
    // signed in with the API key, as a script user would paste it
    await page.goto(`${baseUrl}/dashboard/#/sessions`);
    await page.evaluate(`sessionStorage.setItem('gw.token', ${JSON.stringify(org.adminKey)})`);
    // the app read the (empty) token when it loaded: load it again so it signs in with the key
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

  it('lists the chat a contact wrote in, with its last message and unread count, and opening it reads it', async () => {
    await inbound({ text: 'Hi! Is my order on its way?' });
    await inbound({ type: 'image', media: { base64: PNG, mimetype: 'image/png', filename: 'receipt.png' }, text: 'the receipt' });
    await page.goto(`${baseUrl}/dashboard/#/sessions/${sessionId}`);
    await click('[data-inbox-link]');
    const chat = await page.waitForSelector(`button.chat[data-chat-jid="${CONTACT_JID}"] .unread[data-unread="2"]`);
    expect(await chat!.evaluate((el) => el.closest('button')!.textContent)).toContain('the receipt');
    await shot('inbox-chats');

    await click(`button.chat[data-chat-jid="${CONTACT_JID}"]`);
    await page.waitForSelector('li.bubble.in ::-p-text("Is my order on its way?")');
    // the image is inline: its bytes fetched with the token and decoded by the browser
    const img = await page.waitForSelector('li.bubble[data-type="image"] img.inline-image');
    await waitFor(() => img!.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth > 0), 10000, 'the image decoded');
    // read receipts went to the contact, and the unread count is gone
    await waitFor(async () => ((await network.get(`/sim/sessions/${sessionId}/presence-log`)).data as Array<{ type: string }>).filter((e) => e.type === 'read').length >= 2, 10000, 'the read receipts');
    await page.waitForSelector(`button.chat[data-chat-jid="${CONTACT_JID}"]:not(:has(.unread))`);
  });

  it('answers with text (typing shown to the contact while composing), a reply, a poll and a voice note', async () => {
    await click('form.composer textarea[name=text]');
    await page.type('form.composer textarea[name=text]', 'Yes, it ships today.');
    await waitFor(async () => ((await network.get(`/sim/sessions/${sessionId}/presence-log`)).data as Array<{ type: string; presence?: string }>).some((e) => e.type === 'presence' && e.presence === 'composing'), 10000, 'composing on the network');
    await click('form.composer button[type=submit]');
    await page.waitForSelector('li.bubble.out ::-p-text("Yes, it ships today.")');
    await waitFor(async () => (await sentToContact()).some((m) => m.text === 'Yes, it ships today.'), 15000, 'the text on the network');

    // a reply to the contact's first message
    const first = await page.waitForSelector('li.bubble.in ::-p-text("Is my order on its way?")');
    await first!.evaluate((el) => (el.closest('li')!.querySelector('button.link') as unknown as { click(): void }).click());
    await page.waitForSelector('form.composer .replying');
    await page.type('form.composer textarea[name=text]', 'Tracking follows.');
    await click('form.composer button[type=submit]');
    await page.waitForSelector('li.bubble.out blockquote.quoted ::-p-text("Is my order on its way?")');

    // a poll
    await click('form.composer .compose-modes button:nth-child(4)');
    await page.type('form.composer textarea[name=text]', 'Delivery time?');
    await page.type('form.composer textarea[name=options]', 'Morning\nAfternoon');
    await click('form.composer button[type=submit]');
    await page.waitForSelector('li.bubble[data-type="poll"] [data-poll] ::-p-text("Delivery time?")');

    // a voice note from an uploaded file
    const voice = join(REPO_ROOT, 'tmp', `inbox-voice-${process.pid}.ogg`);
    writeFileSync(voice, Buffer.from('OggS fake opus voice note bytes'));
    await click('form.composer .compose-modes button:nth-child(3)');
    const file = await page.waitForSelector('form.composer input[type=file]');
    await (file as unknown as { uploadFile(path: string): Promise<void> }).uploadFile(voice);
    await click('form.composer button[type=submit]');
    await page.waitForSelector('li.bubble.out[data-type="voice"]');
    const onNetwork = await waitFor(async () => {
      const sent = await sentToContact();
      const poll = sent.find((m) => m.type === 'poll');
      const ptt = sent.find((m) => m.ptt === true);
      const reply = sent.find((m) => m.text === 'Tracking follows.');
      return poll && ptt && reply ? { poll, ptt, reply } : null;
    }, 20000, 'the poll, the voice note and the reply on the network');
    expect(onNetwork.reply.quotedWaMessageId).toEqual(expect.any(String));
  });

  it("shows the contact's vote, reaction, edit and delete as they happen", async () => {
    const poll = (await sentToContact()).find((m) => m.type === 'poll')!;
    expect((await network.post(`/sim/sessions/${sessionId}/poll-vote`, { from: CONTACT, pollWaMessageId: poll.id, options: ['Afternoon'] })).status).toBe(200);
    await page.waitForSelector('li.bubble[data-type="poll"] li[data-option="Afternoon"][data-votes="1"]');

    const answer = (await sentToContact()).find((m) => m.text === 'Yes, it ships today.')!;
    expect((await network.post(`/sim/sessions/${sessionId}/reaction`, { from: CONTACT, waMessageId: answer.id, emoji: '🙏' })).status).toBe(200);
    const answered = await waitFor(async () => bubbleOf(String(answer.id), await logOfChat()), 10000, 'the answer in the log');
    await page.waitForSelector(`${answered} [data-reactions] ::-p-text("🙏")`);

    const typo = await inbound({ text: 'Thnaks!' });
    const typoBubble = await waitFor(async () => bubbleOf(typo, await logOfChat()), 10000, 'the typo in the log');
    await page.waitForSelector(`${typoBubble} ::-p-text("Thnaks!")`);
    expect((await network.post(`/sim/sessions/${sessionId}/edit`, { from: CONTACT, waMessageId: typo, text: 'Thanks!' })).status).toBe(200);
    await page.waitForSelector(`${typoBubble} [data-edited]`);
    expect(await textOf(typoBubble)).toContain('Thanks!');

    const oops = await inbound({ text: 'wrong chat, sorry' });
    const oopsBubble = await waitFor(async () => bubbleOf(oops, await logOfChat()), 10000, 'the wrong message in the log');
    expect((await network.post(`/sim/sessions/${sessionId}/revoke`, { from: CONTACT, waMessageId: oops })).status).toBe(200);
    await page.waitForSelector(`${oopsBubble} [data-revoked]`);
    expect(await textOf(oopsBubble)).not.toContain('wrong chat');
    await shot('inbox-thread');
  });

  it("shows the contact's details and blocks the contact on the network", async () => {
    await click('.thread-head button[aria-expanded]::-p-text("Contact")');
    await page.waitForSelector(`[data-contact="${CONTACT_JID}"] ::-p-text("Busy building")`);
    await click(`[data-contact="${CONTACT_JID}"] button.danger`);
    await page.waitForSelector(`[data-contact="${CONTACT_JID}"] button::-p-text("Unblock")`);
    const account = await network.get(`/sim/sessions/${sessionId}/account`);
    expect(account.blocked).toContain(CONTACT_JID);
    await shot('inbox-contact');
    expect(pageErrors).toEqual([]);
  });

  it('administers a group: members with badges, make admin, subject, settings, invite link revoked', async () => {
    await authed(`/api/v1/sessions/${sessionId}/contacts/${CONTACT_JID}:unblock`, { method: 'POST' });
    const created = await authed(`/api/v1/sessions/${sessionId}/groups`, { method: 'POST', body: JSON.stringify({ name: 'Orders', participants: [CONTACT_JID] }) });
    expect(created.status).toBe(201);
    const { groupJid } = (await created.json()) as { groupJid: string };
    await page.goto(`${baseUrl}/dashboard/#/sessions/${sessionId}`);
    await click(`a[href$="/groups/${encodeURIComponent(groupJid)}"]`);
    const member = `tr[data-member="${CONTACT_JID}"]`;
    await page.waitForSelector(`${member} ::-p-text("member")`);
    await page.waitForSelector('table[data-testid=members] .badge::-p-text("owner")');
    await click(`${member} button::-p-text("Make admin")`);
    await page.waitForSelector(`${member} .badge::-p-text("admin")`);
    expect(await textOf('[data-outcome]')).toContain(`${CONTACT}: ok`);

    await page.waitForSelector('input[name=subject]', { visible: true });
    await page.$eval('input[name=subject]', (el) => ((el as unknown as { value: string }).value = ''));
    await page.type('input[name=subject]', 'Orders (EU)');
    await click('button::-p-text("Save")');
    await click('input[name=isLocked]');
    await waitFor(async () => {
      const g = (await network.get('/sim/groups')).data.find((x: { groupJid: string }) => x.groupJid === groupJid);
      return g?.subject === 'Orders (EU)' && g?.isLocked === true;
    }, 10000, 'the subject and the lock on the network');

    const before = await textOf('[data-invite]');
    expect(before).toMatch(/^https:\/\/chat\.whatsapp\.com\//);
    await click('button::-p-text("Revoke")');
    await waitFor(async () => (await textOf('[data-invite]')) !== before, 10000, 'a new invite link');
    await shot('group');
  });

  it('posts a status to an audience from the session page', async () => {
    await page.goto(`${baseUrl}/dashboard/#/sessions/${sessionId}`);
    await page.waitForSelector('input[name=statusText]', { visible: true });
    await page.type('input[name=statusText]', 'Closed for the holidays');
    await page.type('input[name=audience]', CONTACT);
    await click('button::-p-text("Post status")');
    await page.waitForSelector('[data-status-posted]');
    const story = await waitFor(
      async () => ((await network.get(`/sim/messages?sessionId=${sessionId}`)).data as Array<Record<string, unknown>>).find((m) => m.text === 'Closed for the holidays'),
      15000,
      'the status on the network',
    );
    expect(story).toMatchObject({ to: 'status@broadcast', status: expect.objectContaining({ audience: [CONTACT_JID] }) });
  });

  it('fits a phone: the chat list, then the thread, with no sideways scroll at 390 px', async () => {
    const PHONE = { width: 390, height: 844 };
    await page.setViewport(PHONE);
    const overflow = async () => Math.max(0, ((await page.evaluate('document.scrollingElement.scrollWidth')) as number) - PHONE.width);
    await page.goto(`${baseUrl}/dashboard/#/sessions/${sessionId}/inbox`);
    await page.waitForSelector(`button.chat[data-chat-jid="${CONTACT_JID}"]`, { visible: true });
    expect(await overflow()).toBe(0);
    await click(`button.chat[data-chat-jid="${CONTACT_JID}"]`);
    await page.waitForSelector('form.composer', { visible: true });
    // the list gives way to the thread, which has a way back
    expect(await page.$eval('.chat-list', (el) => (globalThis as unknown as { getComputedStyle(e: unknown): { display: string } }).getComputedStyle(el).display)).toBe('none');
    await page.waitForSelector('.thread-head .back', { visible: true });
    expect(await overflow()).toBe(0);
    await shot('inbox-390');
    await page.setViewport({ width: 1280, height: 860 });
  });
});
