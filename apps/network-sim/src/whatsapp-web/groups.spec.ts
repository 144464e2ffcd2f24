import type { SimNetworkFrame } from '@app/contracts';
import { DeviceLink, SimNetwork } from '../sim-network';
import { answerGroupIq, answerGroupPictureIq, GroupIqContext, groupNotifications } from './groups';
import { child, children, IqError, iqReply } from './stanzas';
import type { BinaryNode } from './wa-kit';

const OWNER = '15551110000@s.whatsapp.net';
const ALICE = '15551110001@s.whatsapp.net';
const BOB = '15551110002@s.whatsapp.net';
const NOBODY = '15551119999@s.whatsapp.net';

/** A device paired on the network with `phoneNumber`, its frames, and the context its group IQs are answered in. */
function pairedDevice(network: SimNetwork, sessionId: string, phoneNumber: string): { ctx: GroupIqContext; frames: SimNetworkFrame[] } {
  const frames: SimNetworkFrame[] = [];
  const link: DeviceLink = { send: (f) => void frames.push(f), close: () => undefined, drop: () => undefined };
  network.attach(sessionId, link, null);
  network.scan(sessionId, { phoneNumber });
  const account = { jid: `${phoneNumber}@s.whatsapp.net`, lid: network.lidOf(phoneNumber), phoneNumber };
  return { ctx: { network, sessionId, link, account }, frames };
}

const groupIq = (to: string, type: string, first: BinaryNode): BinaryNode => ({ tag: 'iq', attrs: { id: 'g1', to, type, xmlns: 'w:g2' }, content: [first] });
const participants = (jids: string[]) => jids.map((jid) => ({ tag: 'participant', attrs: { jid } }));
/** The IQ's error code (as Baileys reads it), or 'result'. */
const outcome = (iq: BinaryNode, ctx: GroupIqContext, answer = answerGroupIq) => {
  const reply = iqReply(iq, () => answer(iq, ctx));
  return reply.attrs.type === 'result' ? 'result' : child(reply, 'error')?.attrs.code;
};

describe('group IQs on the WhatsApp Web front door', () => {
  let network: SimNetwork;
  let frames: SimNetworkFrame[];
  let ctx: GroupIqContext;
  beforeEach(() => {
    network = new SimNetwork({ qrIntervalMs: 60_000 });
    ({ ctx, frames } = pairedDevice(network, 's1', '15551110000'));
  });
  const create = () => answerGroupIq(groupIq('@g.us', 'set', { tag: 'create', attrs: { subject: 'Team', key: 'k' }, content: participants([ALICE]) }), ctx)![0];
  const change = (jid: string, action: string, jids: string[], asker = ctx) =>
    children(answerGroupIq(groupIq(jid, 'set', { tag: action, attrs: {}, content: participants(jids) }), asker)![0]).map((p) => [p.attrs.jid, p.attrs.error ?? '200']);

  it('creates the group on the network and describes it as WhatsApp does (owner superadmin, PN addressing, lids beside)', () => {
    const group = create();
    const jid = `${group.attrs.id}@g.us`;
    expect(network.listGroups('s1')).toEqual([expect.objectContaining({ groupJid: jid, subject: 'Team', participants: [OWNER, ALICE] })]);
    expect(group.attrs).toMatchObject({ subject: 'Team', creator: OWNER, addressing_mode: 'pn', size: '2' });
    expect(children(group).map((p) => [p.attrs.jid, p.attrs.type ?? null, p.attrs.lid])).toEqual([
      [OWNER, 'superadmin', network.lidOf('15551110000')],
      [ALICE, null, network.lidOf('15551110001')],
    ]);
    const query = answerGroupIq(groupIq(jid, 'get', { tag: 'query', attrs: { request: 'interactive' } }), ctx)![0];
    expect(query).toEqual(group);
    // a read of the metadata, counted as the sim door counts it
    expect(network.world.groupAdmin.state(network.group(jid)).metadataReads).toBe(1);
  });

  it('answers participant changes per participant with WhatsApp\'s codes and applies only those that succeed; admin flags follow', () => {
    const jid = `${create().attrs.id}@g.us`;
    network.lidOf('15551110002'); // BOB has an account (the network gave it a LID); NOBODY has none
    expect(change(jid, 'add', [BOB, ALICE, NOBODY, 'nobody'])).toEqual([[BOB, '200'], [ALICE, '409'], [NOBODY, '404'], ['nobody', '404']]);
    expect(network.group(jid).participants).toEqual([OWNER, ALICE, BOB]);
    expect(change(jid, 'promote', [ALICE])).toEqual([[ALICE, '200']]);
    expect(change(jid, 'promote', [ALICE])).toEqual([[ALICE, '409']]);
    const query = answerGroupIq(groupIq(jid, 'get', { tag: 'query', attrs: {} }), ctx)![0];
    expect(children(query).map((p) => [p.attrs.jid, p.attrs.type ?? null])).toEqual([[OWNER, 'superadmin'], [ALICE, 'admin'], [BOB, null]]);
    // nobody demotes the creator
    expect(change(jid, 'demote', [ALICE, OWNER])).toEqual([[ALICE, '200'], [OWNER, '401']]);
    expect(change(jid, 'remove', [BOB, NOBODY])).toEqual([[BOB, '200'], [NOBODY, '404']]);
    expect(network.group(jid)).toMatchObject({ participants: [OWNER, ALICE], admins: [OWNER], superAdmins: [OWNER] });
    // the network told the device of each change that happened (its w:gp2 notifications), the owner as actor
    const told = frames.filter((f) => f.type === 'group-participants').map((f) => f.type === 'group-participants' && [f.action, f.participants, f.actor]);
    expect(told).toEqual([['add', [BOB], OWNER], ['promote', [ALICE], OWNER], ['demote', [ALICE], OWNER], ['remove', [BOB], OWNER]]);
  });

  it('changes subject, description and settings (one notification each, with the actor); a member who is not admin is refused as WhatsApp refuses it', () => {
    const jid = `${create().attrs.id}@g.us`;
    const alice = pairedDevice(network, 's2', '15551110001');
    const set = (first: BinaryNode, asker = ctx) => outcome(groupIq(jid, 'set', first), asker);
    expect(set({ tag: 'subject', attrs: {}, content: Buffer.from('Renamed') })).toBe('result');
    expect(set({ tag: 'description', attrs: { id: 'd1' }, content: [{ tag: 'body', attrs: {}, content: Buffer.from('the rules') }] })).toBe('result');
    expect(set({ tag: 'announcement', attrs: {} })).toBe('result');
    expect(set({ tag: 'locked', attrs: {} })).toBe('result');
    expect(network.group(jid)).toMatchObject({ subject: 'Renamed', description: 'the rules', isAnnounce: true, isLocked: true });
    const updates = alice.frames.filter((f) => f.type === 'group-update').map((f) => f.type === 'group-update' && [f.changes, f.actor]);
    expect(updates).toEqual([[{ subject: 'Renamed' }, OWNER], [{ description: 'the rules' }, OWNER], [{ isAnnounce: true }, OWNER], [{ isLocked: true }, OWNER]]);

    // ALICE is a member, not an admin: settings, a locked group's info, participants and the invite are refused
    expect(set({ tag: 'not_announcement', attrs: {} }, alice.ctx)).toBe('401');
    expect(set({ tag: 'subject', attrs: {}, content: Buffer.from('Mine') }, alice.ctx)).toBe('401');
    expect(outcome(groupIq(jid, 'get', { tag: 'invite', attrs: {} }), alice.ctx)).toBe('401');
    expect(change(jid, 'add', [BOB], alice.ctx)).toEqual([[BOB, '401']]);
    expect(network.group(jid)).toMatchObject({ subject: 'Renamed', isAnnounce: true, participants: [OWNER, ALICE] });
    // unlocked, any member edits the info; the description can be deleted
    expect(set({ tag: 'unlocked', attrs: {} })).toBe('result');
    expect(set({ tag: 'subject', attrs: {}, content: Buffer.from('Mine') }, alice.ctx)).toBe('result');
    expect(set({ tag: 'description', attrs: { delete: 'true' } }, alice.ctx)).toBe('result');
    expect(network.group(jid)).toMatchObject({ subject: 'Mine', description: '' });
    expect(frames.filter((f) => f.type === 'group-update').slice(-2).map((f) => f.type === 'group-update' && f.actor)).toEqual([ALICE, ALICE]);
  });

  it('gives the invite code to an admin, joins by it from a second device, revokes it (the old one is 404), and leaves', () => {
    const jid = `${create().attrs.id}@g.us`;
    const bob = pairedDevice(network, 's3', '15551110002');
    const code = answerGroupIq(groupIq(jid, 'get', { tag: 'invite', attrs: {} }), ctx)![0].attrs.code;
    expect(code).toBe(network.world.groupAdmin.state(network.group(jid)).inviteCode);
    // the group behind a code, then the join: BOB's device is told with itself as actor
    expect(answerGroupIq(groupIq('@g.us', 'get', { tag: 'invite', attrs: { code } }), bob.ctx)![0].attrs).toMatchObject({ subject: 'Team', size: '2' });
    expect(answerGroupIq(groupIq('@g.us', 'set', { tag: 'invite', attrs: { code } }), bob.ctx)).toEqual([{ tag: 'group', attrs: { jid } }]);
    expect(network.group(jid).participants).toEqual([OWNER, ALICE, BOB]);
    expect(bob.frames.filter((f) => f.type === 'group-participants')).toEqual([expect.objectContaining({ action: 'add', participants: [BOB], actor: BOB })]);

    const revoked = answerGroupIq(groupIq(jid, 'set', { tag: 'invite', attrs: {} }), ctx)![0].attrs.code;
    expect(revoked).not.toBe(code);
    expect(outcome(groupIq('@g.us', 'set', { tag: 'invite', attrs: { code } }), bob.ctx)).toBe('404');

    expect(answerGroupIq(groupIq('@g.us', 'set', { tag: 'leave', attrs: {}, content: [{ tag: 'group', attrs: { id: jid } }] }), bob.ctx)).toEqual([
      { tag: 'leave', attrs: {}, content: [{ tag: 'group', attrs: { id: jid } }] },
    ]);
    expect(network.group(jid).participants).toEqual([OWNER, ALICE]);
    expect(frames.filter((f) => f.type === 'group-participants').map((f) => f.type === 'group-participants' && [f.action, f.actor])).toEqual([['add', BOB], ['remove', BOB]]);
    // left: the group is no longer BOB's to read
    expect(outcome(groupIq(jid, 'get', { tag: 'query', attrs: {} }), bob.ctx)).toBe('404');
  });

  it('sets the group picture from the JPEG Baileys sends (target = the group) and says where it is served', () => {
    const jid = `${create().attrs.id}@g.us`;
    const pictureIq = (type: string, content?: Buffer): BinaryNode => ({
      tag: 'iq',
      attrs: { id: 'p1', to: 's.whatsapp.net', type, xmlns: 'w:profile:picture', target: jid },
      content: [{ tag: 'picture', attrs: { type: 'image', ...(content ? {} : { query: 'url' }) }, ...(content ? { content } : {}) }],
    });
    expect(outcome(pictureIq('get'), ctx, answerGroupPictureIq)).toBe('404');
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
    expect(outcome(pictureIq('set', jpeg), ctx, answerGroupPictureIq)).toBe('result');
    const details = network.world.groupAdmin.details(network.group(jid));
    expect(details.pictureUrl).toMatch(/^\/sim\/media\//);
    expect(answerGroupPictureIq(pictureIq('get'), ctx)[0].attrs.url).toBe(details.pictureUrl);
  });

  it('refuses a query by a non-member or of an unknown group', () => {
    const jid = `${create().attrs.id}@g.us`;
    const unknown = iqReply(groupIq('1-2@g.us', 'get', { tag: 'query', attrs: {} }), () => answerGroupIq(groupIq('1-2@g.us', 'get', { tag: 'query', attrs: {} }), ctx));
    expect(child(unknown, 'error')?.attrs).toEqual({ code: '404', text: 'item-not-found' });
    expect(unknown.attrs.from).toBe('1-2@g.us');
    const stranger = pairedDevice(network, 's4', '15551110002');
    expect(() => answerGroupIq(groupIq(jid, 'get', { tag: 'query', attrs: {} }), stranger.ctx)).toThrow(IqError);
  });

  it('makes one w:gp2 notification per change, as Baileys reads one child per notification', () => {
    let n = 0;
    const notes = groupNotifications(() => `n${++n}`, { type: 'group-update', groupJid: '1-2@g.us', changes: { subject: 'New', description: '', isAnnounce: true, isLocked: false } }, OWNER, () => '9@lid');
    expect(notes.map((x) => [x.attrs.id, x.attrs.type, x.attrs.from, x.attrs.participant, children(x).map((c) => c.tag)])).toEqual([
      ['n1', 'w:gp2', '1-2@g.us', OWNER, ['subject']],
      ['n2', 'w:gp2', '1-2@g.us', OWNER, ['description']],
      ['n3', 'w:gp2', '1-2@g.us', OWNER, ['announcement']],
      ['n4', 'w:gp2', '1-2@g.us', OWNER, ['unlocked']],
    ]);
    const [added] = groupNotifications(() => 'p', { type: 'group-participants', groupJid: '1-2@g.us', action: 'add', participants: [ALICE] }, OWNER, () => '9@lid');
    expect(child(added, 'add')?.content).toEqual([{ tag: 'participant', attrs: { jid: ALICE, lid: '9@lid' } }]);
    // the control API's unnamed admin: no participant (and no subject owner), so Baileys names no author
    const [renamed, locked] = groupNotifications(() => 'a', { type: 'group-update', groupJid: '1-2@g.us', changes: { subject: 'Newer', isLocked: true } }, null, () => '9@lid');
    expect(renamed.attrs).not.toHaveProperty('participant');
    expect(child(renamed, 'subject')?.attrs).not.toHaveProperty('s_o');
    expect([locked.attrs.participant, children(locked).map((c) => c.tag)]).toEqual([undefined, ['locked']]);
  });

  it('takes a member\'s receipt for a group message (participant on the event); refuses `from` outside the group or on a 1:1 message', () => {
    const jid = `${create().attrs.id}@g.us`;
    network.request('s1', ctx.link, 'send', { waMessageId: 'G1', to: jid, content: { type: 'text', text: 'hi' }, quoted: null, mentions: [] });
    network.request('s1', ctx.link, 'send', { waMessageId: 'D1', to: BOB, content: { type: 'text', text: 'hi' }, quoted: null, mentions: [] });
    network.receipt('s1', { waMessageId: 'G1', status: 'read', from: '15551110001' });
    expect(frames.filter((f) => f.type === 'receipt')).toEqual([expect.objectContaining({ waMessageId: 'G1', chatJid: jid, status: 'read', participant: ALICE })]);
    const fieldOf = (body: Record<string, unknown>) => {
      try {
        network.receipt('s1', body);
      } catch (err) {
        return Object.keys((err as { details: Record<string, unknown> }).details);
      }
      return [];
    };
    expect(fieldOf({ waMessageId: 'G1', status: 'read', from: BOB })).toEqual(['from']);
    expect(fieldOf({ waMessageId: 'D1', status: 'read', from: BOB })).toEqual(['from']);
    expect(frames.filter((f) => f.type === 'receipt')).toHaveLength(1);
  });
});
