import type { WASocket } from '@whiskeysockets/baileys';
import pino from 'pino';
import { DomainError } from '@app/contracts';
import { blocklistEventFrom, CONTACT_BAILEYS_ACTIONS as actions, contactFactsFrom, contactsEventFrom } from './contacts';
import type { BaileysActionContext } from './context';

const OWN = '15550001111@s.whatsapp.net';
const ANA = '15550002222@s.whatsapp.net';
const ANA_LID = '99990002222@lid';

/** A Baileys error as its socket throws it (a Boom with the stanza's code). */
const boom = (statusCode: number, message: string) => Object.assign(new Error(message), { output: { statusCode } });

/**
 * The socket functions the contact actions call, recording each call; answers as WhatsApp would for an account that
 * knows Ana (on WhatsApp, with an about text, a picture and a LID) and nobody else.
 */
function fakeSocket(over: Partial<Record<string, unknown>> = {}) {
  const calls: Array<[string, ...unknown[]]> = [];
  const record =
    (name: string, answer: (...args: unknown[]) => unknown = () => undefined) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return answer(...args);
    };
  const me: { id: string; name?: string } = { id: '15550001111:3@s.whatsapp.net', name: 'Desk' };
  const sock = {
    user: me,
    authState: { creds: { me } },
    onWhatsApp: record('onWhatsApp', (...jids) => (jids as string[]).filter((j) => j === ANA).map((jid) => ({ jid, exists: true }))),
    fetchStatus: record('fetchStatus', (jid) => [{ id: jid, status: { status: jid === ANA ? 'Out surfing' : null, setAt: new Date(0) } }]),
    profilePictureUrl: record('profilePictureUrl', (jid) => {
      if (jid === ANA) return 'https://pps.whatsapp.net/ana.jpg';
      throw boom(404, 'item-not-found');
    }),
    updateBlockStatus: record('updateBlockStatus'),
    fetchBlocklist: record('fetchBlocklist', () => [ANA, undefined]),
    sendPresenceUpdate: record('sendPresenceUpdate'),
    presenceSubscribe: record('presenceSubscribe'),
    updateProfileName: record('updateProfileName', (name) => void (me.name = name as string)),
    updateProfileStatus: record('updateProfileStatus'),
    updateProfilePicture: record('updateProfilePicture'),
    removeProfilePicture: record('removeProfilePicture'),
    signalRepository: { lidMapping: { getLIDForPN: async (jid: string) => (jid === ANA ? `${ANA_LID.replace('@lid', ':0@lid')}` : null) } },
    ...over,
  };
  const ctx: BaileysActionContext = {
    sessionId: 'ses_1',
    sock: sock as unknown as WASocket,
    ownJid: () => OWN,
    runtime: {} as BaileysActionContext['runtime'],
    lookups: null,
    emit: () => undefined,
    logger: pino({ level: 'silent' }),
  };
  return { ctx, calls, me };
}

describe('Baileys contact actions (fake socket)', () => {
  it('contacts.check asks onWhatsApp for every number at once and answers in order, with the LID the mapping knows', async () => {
    const { ctx, calls } = fakeSocket();
    const { results } = await actions['contacts.check'](ctx, { phoneNumbers: ['15550002222', '15550009999'] });
    expect(calls.filter((c) => c[0] === 'onWhatsApp')).toEqual([['onWhatsApp', ANA, '15550009999@s.whatsapp.net']]);
    expect(results).toEqual([
      { phoneNumber: '15550002222', exists: true, jid: ANA, lid: ANA_LID },
      { phoneNumber: '15550009999', exists: false, jid: null, lid: null },
    ]);
  });

  it('contacts.profile: about and picture of a contact on WhatsApp; a number not on it is not asked further', async () => {
    const { ctx, calls } = fakeSocket();
    expect(await actions['contacts.profile'](ctx, { jid: ANA })).toEqual({ exists: true, about: 'Out surfing', pictureUrl: 'https://pps.whatsapp.net/ana.jpg' });
    expect(calls.find((c) => c[0] === 'profilePictureUrl')).toEqual(['profilePictureUrl', ANA, 'image']);
    calls.length = 0;
    expect(await actions['contacts.profile'](ctx, { jid: '15550009999@s.whatsapp.net' })).toEqual({ exists: false, about: null, pictureUrl: null });
    expect(calls.map((c) => c[0])).toEqual(['onWhatsApp']);
  });

  it('contacts.profile: a picture WhatsApp hides (401) or lacks (404) is null; any other failure is the caller’s error', async () => {
    const hidden = fakeSocket({ profilePictureUrl: async () => Promise.reject(boom(401, 'not-authorized')) });
    expect((await actions['contacts.profile'](hidden.ctx, { jid: ANA })).pictureUrl).toBeNull();
    const down = fakeSocket({ profilePictureUrl: async () => Promise.reject(boom(500, 'internal-server-error')) });
    await expect(actions['contacts.profile'](down.ctx, { jid: ANA })).rejects.toThrow('internal-server-error');
  });

  it('contacts.block / unblock go through updateBlockStatus and answer the state after, with the LID', async () => {
    const { ctx, calls } = fakeSocket();
    expect(await actions['contacts.block'](ctx, { jid: ANA, block: true })).toEqual({ jid: ANA, lid: ANA_LID, blocked: true });
    expect(await actions['contacts.block'](ctx, { jid: ANA_LID, block: false })).toEqual({ jid: ANA_LID, lid: ANA_LID, blocked: false });
    expect(calls.filter((c) => c[0] === 'updateBlockStatus')).toEqual([
      ['updateBlockStatus', ANA, 'block'],
      ['updateBlockStatus', ANA_LID, 'unblock'],
    ]);
    expect(await actions['contacts.blocklist'](ctx, {})).toEqual({ jids: [ANA] });
  });

  it('presence: chat states to the chat (recording included), availability for the account, subscriptions', async () => {
    const { ctx, calls } = fakeSocket();
    await actions['presence.chat'](ctx, { chatJid: ANA, presence: 'recording' });
    await actions['presence.account'](ctx, { presence: 'available' });
    await actions['presence.subscribe'](ctx, { jid: ANA });
    expect(calls).toEqual([
      ['sendPresenceUpdate', 'recording', ANA],
      ['sendPresenceUpdate', 'available'],
      ['presenceSubscribe', ANA],
    ]);
  });

  it('presence.account without a profile name is refused (Baileys would drop it silently)', async () => {
    const { ctx, calls, me } = fakeSocket();
    delete me.name;
    await expect(actions['presence.account'](ctx, { presence: 'available' })).rejects.toBeInstanceOf(DomainError);
    expect(calls).toEqual([]);
  });

  it('profile: reads name, about and picture of the own jid; writes go through Baileys’ own profile functions', async () => {
    const { ctx, calls } = fakeSocket();
    expect(await actions['profile.get'](ctx, {})).toEqual({ jid: OWN, name: 'Desk', about: null, pictureUrl: null });
    const updated = await actions['profile.update'](ctx, { name: 'Support', about: 'Back soon' });
    expect(updated.name).toBe('Support');
    await actions['profile.picture.set'](ctx, { base64: Buffer.from('jpeg bytes').toString('base64'), mimetype: 'image/jpeg' });
    await actions['profile.picture.remove'](ctx, {});
    const writes = calls.filter((c) => /^(update|remove)Profile/.test(c[0]));
    expect(writes).toEqual([
      ['updateProfileName', 'Support'],
      ['updateProfileStatus', 'Back soon'],
      ['updateProfilePicture', OWN, Buffer.from('jpeg bytes')],
      ['removeProfilePicture', OWN],
    ]);
  });
});

describe('Baileys contact and blocklist events → engine events', () => {
  it('keys a contact by its number when known, keeps only the fields Baileys sent, and drops non-contacts', () => {
    expect(contactFactsFrom({ id: ANA_LID, phoneNumber: ANA, notify: 'Ana', verifiedName: 'Ana Ltd' })).toEqual({ jid: ANA, lid: ANA_LID, pushName: 'Ana', isBusiness: true, verifiedName: 'Ana Ltd' });
    expect(contactFactsFrom({ id: '15550002222:4@s.whatsapp.net', name: 'Ana (book)', imgUrl: null })).toEqual({ jid: ANA, name: 'Ana (book)', pictureUrl: null });
    expect(contactFactsFrom({ id: ANA_LID })).toEqual({ jid: ANA_LID, lid: ANA_LID });
    expect(contactFactsFrom({ id: '120363000000000000@g.us', name: 'a group' })).toBeNull();
    expect(contactsEventFrom([{ id: 'status@broadcast' }])).toBeNull();
    expect(contactsEventFrom([{ id: ANA, imgUrl: 'changed' }])).toEqual({ type: 'contacts', contacts: [{ jid: ANA }] });
  });

  it('maps the whole blocklist and its changes', () => {
    expect(blocklistEventFrom({ blocklist: [ANA, '15550003333:2@s.whatsapp.net'] })).toEqual({ type: 'blocklist', action: 'set', jids: [ANA, '15550003333@s.whatsapp.net'] });
    expect(blocklistEventFrom({ blocklist: [ANA_LID], type: 'add' })).toEqual({ type: 'blocklist', action: 'add', jids: [ANA_LID] });
    expect(blocklistEventFrom({ blocklist: [ANA], type: 'remove' })).toEqual({ type: 'blocklist', action: 'remove', jids: [ANA] });
  });
});
