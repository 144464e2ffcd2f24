import { join } from 'node:path';
import { spawnRegistered } from './support/process-registry';
import { REPO_ROOT } from './support/run-context';

/**
 * The real Baileys socket, through BaileysEngine from dist/, against a local WebSocket server.
 * jest cannot load ESM-only Baileys, so test/support/baileys-smoke.js runs it in a child process and reports JSON.
 * The child must exit by itself: a socket, interval or timer left behind would keep it alive and fail this test.
 */
interface SmokeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  exitedByItself: boolean;
}

const EXIT_LIMIT_MS = 25_000;

function runSmoke(): Promise<SmokeRun> {
  return new Promise((resolve) => {
    const child = spawnRegistered(process.execPath, [join(REPO_ROOT, 'test/support/baileys-smoke.js')], {
      cwd: REPO_ROOT,
      env: { ...process.env, SMOKE_CONNECT_TIMEOUT_MS: '2000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let exitedByItself = true;
    child.stdout!.on('data', (d) => (stdout += d.toString()));
    child.stderr!.on('data', (d) => (stderr += d.toString()));
    const limit = setTimeout(() => {
      exitedByItself = false;
      child.kill('SIGKILL');
    }, EXIT_LIMIT_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(limit);
      resolve({ code, signal, stdout, stderr, exitedByItself });
    });
  });
}

describe('Baileys engine on a real socket (local WebSocket server)', () => {
  let run: SmokeRun;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the smoke script's JSON report
  let report: any;

  beforeAll(async () => {
    run = await runSmoke();
    const line = run.stdout.trim().split('\n').pop() ?? '';
    report = JSON.parse(line || '{}');
  }, EXIT_LIMIT_MS + 5_000);

  it('exits on its own, cleanly, without stray rejections', () => {
    // on failure jest prints the whole run, stderr included
    expect(run).toMatchObject({ exitedByItself: true, code: 0 });
    expect(report.problems).toEqual([]);
  });

  it('connects to waWebSocketUrl and starts the Noise handshake, then close() ends the socket on both sides', () => {
    const { closedByUs } = report;
    expect(closedByUs.ok).toBe(true);
    expect(closedByUs.seen.connections).toBe(1);
    expect(closedByUs.seen.path).toBe('/ws/chat');
    // 'W' 'A' + protocol version 6 + dictionary version 3: the Noise prologue WhatsApp servers expect first
    expect(closedByUs.seen.firstBytes).toBe('57410603');
    expect(closedByUs.seen.closed).toBe(true);
    expect(closedByUs.events).toEqual([{ type: 'close', reason: 'closed_by_us', statusCode: null, message: expect.any(String) }]);
    expect(closedByUs.afterClose).toMatch(/^EngineConnectionClosedError: .*closed/);
  });

  it('reports a server hang-up as a transient close and does not reconnect by itself', () => {
    const { droppedByServer } = report;
    expect(droppedByServer.ok).toBe(true);
    expect(droppedByServer.events).toEqual([{ type: 'close', reason: 'transient', statusCode: 428, message: expect.any(String) }]);
    expect(droppedByServer.connections).toBe(1);
  });

  it("stores Baileys' real creds through the auth-state JSON without loss, compatible with BufferJSON", () => {
    expect(report.credsRoundTrip).toEqual({ ours: true, fromBufferJson: true, toBufferJson: true, privateKeyIsBuffer: true });
  });

  it('reports a refused connection as a transient close, not an exception', () => {
    const { refused } = report;
    expect(refused.ok).toBe(true);
    expect(refused.events).toHaveLength(1);
    expect(refused.events[0]).toMatchObject({ type: 'close', reason: 'transient' });
  });

  it("decrypts a poll vote sealed as a phone seals it, with Baileys' real poll helpers and proto codec", () => {
    expect(report.pollVote.events).toEqual([
      { type: 'poll-vote', pollWaMessageId: 'POLL1', chatJid: '120363000000000001@g.us', voter: '15550002222@s.whatsapp.net', selectedOptions: ['Sushi'] },
    ]);
  });

  it('streams inbound media decrypted from the media host, names expired media (404/410) unavailable, refuses a crafted host', () => {
    // 300 kB arrive in several chunks: the file is decrypted as it streams, never held whole
    expect(report.media).toEqual({
      sameBytes: true,
      chunks: expect.any(Number),
      missing: 'MediaUnavailableError',
      gone: 'MediaUnavailableError',
      // a url naming another host than the media host is refused before any connection (issue 37)
      crafted: 'MediaReferenceRefusedError',
      strayConnections: 0,
    });
    expect(report.media.chunks).toBeGreaterThan(1);
  });

  it("answers a group send with the addressing mode and member ids Baileys' own groupMetadata() gives, for a LID and a PN group", () => {
    const { lid, pn } = report.groupMetadata;
    expect(lid.ours).toEqual(lid.baileys);
    expect(lid.ours).toEqual({
      addressingMode: 'lid',
      participants: [
        { id: '98765432109876@lid', phoneNumber: '491701234567@s.whatsapp.net', admin: 'superadmin' },
        { id: '11111111111111@lid', phoneNumber: '15550001111@s.whatsapp.net', admin: null },
      ],
    });
    // the API keeps showing numbers
    expect(lid.apiParticipants).toEqual(['491701234567@s.whatsapp.net', '15550001111@s.whatsapp.net']);
    expect(pn.ours).toEqual(pn.baileys);
    expect(pn.ours).toMatchObject({ addressingMode: 'pn', participants: [{ id: '491701234567@s.whatsapp.net', lid: '98765432109876@lid' }, { id: '15550001111@s.whatsapp.net' }] });
  });

  it("hands Baileys' real generateWAMessageContent content it accepts for every outbound type, and reads it back", () => {
    const { outbound } = report;
    expect(outbound.text).toMatchObject({ kind: 'extendedTextMessage', mentioned: ['15550002222@s.whatsapp.net'], received: { type: 'text', text: 'hi @15550002222', mentions: ['15550002222@s.whatsapp.net'] } });
    expect(outbound.image).toMatchObject({ kind: 'imageMessage', mimetype: 'image/png', caption: 'look', received: { type: 'image', media: { mimetype: 'image/png', size: 64, caption: 'look', mediaType: 'image' } } });
    expect(outbound.video).toMatchObject({ kind: 'videoMessage', mimetype: 'video/mp4', received: { type: 'video', media: { mediaType: 'video' } } });
    expect(outbound.document).toMatchObject({
      kind: 'documentMessage',
      fileName: 'invoice.pdf',
      caption: 'the invoice',
      received: { type: 'document', media: { filename: 'invoice.pdf', caption: 'the invoice', mimetype: 'application/pdf' } },
    });
    // an audio file stays one (Ogg included); a voice note is the voice type, sent as WhatsApp plays them
    expect(outbound.audio).toMatchObject({ kind: 'audioMessage', ptt: false, mimetype: 'audio/ogg', received: { type: 'audio' } });
    expect(outbound.voice).toMatchObject({ kind: 'audioMessage', ptt: true, mimetype: 'audio/ogg; codecs=opus', received: { type: 'audio' } });
    expect(outbound.location).toMatchObject({ kind: 'locationMessage', received: { type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Tor', address: null } } });
    expect(outbound.contact).toMatchObject({ kind: 'contactMessage', vcard: expect.stringContaining('waid=15550003333'), received: { contact: { fullName: 'Jane Doe', phoneNumber: '15550003333' } } });
    // a reaction is its own event, never a message in the log
    expect(outbound.reaction).toMatchObject({ kind: 'reactionMessage', received: null });
    // the poll carries the secret votes are sealed with; it is stored with the message for decrypting them later
    expect(outbound.poll).toMatchObject({ kind: 'pollCreationMessageV3', hasSecret: true, received: { type: 'poll', poll: { name: 'Lunch?', options: ['Pizza', 'Sushi'], selectableCount: 1 } } });
  });
});
