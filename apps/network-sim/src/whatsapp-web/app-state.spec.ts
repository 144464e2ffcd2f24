import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Baileys is ESM and jest cannot load it, so the scenario runs in a Node child: this file's SCENARIO is bundled with
 * app-state.ts by esbuild (packages stay external: Node loads Baileys itself), run, and its JSON report asserted
 * here. The device's side is Baileys' own: it encodes patches with `encodeSyncdPatch` and decodes the server's with
 * `decodePatches`, as a WhatsApp Web device does.
 */
const SCENARIO = `
import { SimNetwork } from '../sim-network';
import { AppStateServer } from './app-state';
const baileys = require('@whiskeysockets/baileys');

const SESSION = 'ses_appstate';
const ALICE = '15550002222@s.whatsapp.net';
const frames: any[] = [];
const link = { send: (f: any) => frames.push(f), close() {}, drop() {} };

async function main() {
  const network = new SimNetwork({ qrIntervalMs: 60000 });
  network.attach(SESSION, link as any, null);
  network.scan(SESSION, { phoneNumber: '15550001111', isBusiness: true });
  const account = frames.find((f) => f.type === 'paired').credential.account;
  const server = new AppStateServer(baileys);
  const device = { network, sessionId: SESSION, link: link as any, account };
  const key = server.keyOf(account.phoneNumber);
  const keyId = key.keyId.toString('base64');
  const getKey = async (id: string) => (id === keyId ? { keyData: key.keyData } : undefined);
  const states: Record<string, any> = {};
  const sync = (content: any[]) => server.answer({ tag: 'iq', attrs: { xmlns: 'w:sync:app:state', type: 'set' }, content: [{ tag: 'sync', attrs: {}, content }] }, device);
  const refusal = (p: Promise<unknown>) => p.then(() => null, (e) => e.code ?? String(e));
  /** the device resyncs a collection and decodes the patches with Baileys, as it would */
  const resync = async (name: string) => {
    const state = states[name] ?? baileys.newLTHashState();
    const content = await sync([{ tag: 'collection', attrs: { name, version: String(state.version), return_snapshot: 'false' } }]);
    const decoded = await baileys.extractSyncdPatches({ tag: 'iq', attrs: {}, content }, {});
    const { state: next, mutationMap } = await baileys.decodePatches(name, decoded[name].patches, state, getKey, {}, undefined, undefined, true);
    states[name] = next;
    return Object.values(mutationMap).map((m: any) => m.index);
  };
  /** the device uploads a chat modification (Baileys' appPatch) */
  const upload = async (mod: any, jid: string, opts: { tamper?: boolean; version?: number; keyId?: string; keys?: any } = {}) => {
    const create = baileys.chatModificationToAppPatch(mod, jid);
    await resync(create.type);
    const base = states[create.type] ?? baileys.newLTHashState();
    const { patch, state } = await baileys.encodeSyncdPatch(create, opts.keyId ?? keyId, base, opts.keys ?? getKey);
    if (opts.tamper) patch.mutations[0].record.value.blob[0] ^= 1;
    const bytes = baileys.proto.SyncdPatch.encode(patch).finish();
    await sync([{ tag: 'collection', attrs: { name: create.type, version: String(opts.version ?? state.version - 1), return_snapshot: 'false' }, content: [{ tag: 'patch', attrs: {}, content: bytes }] }]);
    states[create.type] = state;
  };
  const chat = () => network.world.chats.state(SESSION, ALICE);
  const report: Record<string, unknown> = {};

  report.labelsSynced = await resync('regular');
  report.emptyCollection = await resync('critical_unblock_low');
  await upload({ archive: true, lastMessages: [] }, ALICE);
  await upload({ pin: true }, ALICE);
  await upload({ mute: 4102444800000 }, ALICE);
  report.afterUploads = { ...chat() };
  report.tampered = await refusal(upload({ archive: false, lastMessages: [] }, ALICE, { tamper: true }));
  report.stale = await refusal(upload({ archive: false, lastMessages: [] }, ALICE, { version: 0 }));
  const otherKey = { keyData: Buffer.alloc(32, 7) };
  report.foreignKey = await refusal(upload({ archive: false, lastMessages: [] }, ALICE, { keyId: 'AAAAAAAA', keys: async () => otherKey }));
  report.afterRefusals = { ...chat() };
  await upload({ mute: null }, ALICE);
  report.unmuted = chat().mutedUntil;
  await upload({ addChatLabel: { labelId: '3' } }, ALICE);
  report.labels = network.world.accountExtras.labelsOfChat(account.jid, ALICE);
  report.unknownLabel = await refusal(upload({ addChatLabel: { labelId: '99' } }, ALICE));
  await upload({ pushNameSetting: 'Acme' }, '');
  report.name = network.world.contacts.register(account.phoneNumber).name;
  // a second device of the same session resyncs from scratch: the same state, from the stored patches
  report.replayed = (await (async () => { for (const k of Object.keys(states)) delete states[k]; return resync('regular_low'); })()).map((i: string[]) => i[0]);
  network.closeAll();
  process.stdout.write(JSON.stringify(report), () => process.exit(0));
}
main().catch((err) => { console.error(err); process.exit(1); });
`;

describe('app state sync on the WhatsApp Web door (Baileys encodes, the door decodes and applies)', () => {
  jest.setTimeout(60_000);

  it('syncs the phone\'s labels, applies verified patches to the model, refuses tampered, stale and foreign-key ones', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- esbuild's API, used only here
    const esbuild = require('esbuild') as typeof import('esbuild');
    const dir = mkdtempSync(join(tmpdir(), 'app-state-spec-'));
    try {
      const out = join(dir, 'scenario.cjs');
      const bundle = esbuild.buildSync({
        stdin: { contents: SCENARIO, resolveDir: __dirname, loader: 'ts', sourcefile: 'scenario.ts' },
        bundle: true,
        platform: 'node',
        format: 'cjs',
        packages: 'external',
        write: false,
        tsconfig: join(__dirname, '../../../../tsconfig.json'),
        logLevel: 'silent',
      });
      writeFileSync(out, bundle.outputFiles[0].contents);
      const root = join(__dirname, '../../../..');
      const env = { ...process.env, NODE_PATH: join(root, 'node_modules') };
      const report = JSON.parse(execFileSync(process.execPath, [out], { cwd: root, env, encoding: 'utf8', timeout: 50_000 }));

      // a business account: the phone wrote its five labels into `regular` on the first sync
      expect(report.labelsSynced).toEqual([1, 2, 3, 4, 5].map((id) => ['label_edit', String(id)]));
      expect(report.emptyCollection).toEqual([]);
      expect(report.afterUploads).toEqual({ archived: true, pinned: true, mutedUntil: 4102444800000 });
      // a flipped bit fails the value MAC, an old version conflicts, an unknown key cannot be read: nothing changes
      expect(report.tampered).toBe(400);
      expect(report.stale).toBe(409);
      expect(report.foreignKey).toBe(400);
      expect(report.afterRefusals).toEqual(report.afterUploads);
      expect(report.unmuted).toBeNull();
      expect(report.labels).toEqual(['3']);
      expect(report.unknownLabel).toBe(404);
      expect(report.name).toBe('Acme');
      expect(report.replayed.sort()).toEqual(['archive', 'pin_v1']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
