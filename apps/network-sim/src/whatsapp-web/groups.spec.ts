import type { SimNetworkFrame } from '@app/contracts';
import { DeviceLink, SimNetwork } from '../sim-network';
import { answerGroupIq, GroupIqContext, GroupRoles, groupNotifications } from './groups';
import { child, children, IqError, iqReply } from './stanzas';
import type { BinaryNode } from './wa-kit';

const OWNER = '15551110000@s.whatsapp.net';
const ALICE = '15551110001@s.whatsapp.net';
const BOB = '15551110002@s.whatsapp.net';

function pairedNetwork(): { network: SimNetwork; link: DeviceLink; frames: SimNetworkFrame[] } {
  const network = new SimNetwork({ qrIntervalMs: 60_000 });
  const frames: SimNetworkFrame[] = [];
  const link: DeviceLink = { send: (f) => void frames.push(f), close: () => undefined, drop: () => undefined };
  network.attach('s1', link, null);
  network.scan('s1', { phoneNumber: '15551110000' });
  return { network, link, frames };
}

const groupIq = (to: string, type: string, first: BinaryNode): BinaryNode => ({ tag: 'iq', attrs: { id: 'g1', to, type, xmlns: 'w:g2' }, content: [first] });
const participants = (jids: string[]) => jids.map((jid) => ({ tag: 'participant', attrs: { jid } }));

describe('group IQs on the WhatsApp Web front door', () => {
  let network: SimNetwork;
  let frames: SimNetworkFrame[];
  let ctx: GroupIqContext;
  beforeEach(() => {
    const paired = pairedNetwork();
    ({ network, frames } = paired);
    ctx = { network, sessionId: 's1', link: paired.link, account: { jid: OWNER, lid: network.lidOf('15551110000'), phoneNumber: '15551110000' }, roles: new GroupRoles() };
  });
  const create = () => answerGroupIq(groupIq('@g.us', 'set', { tag: 'create', attrs: { subject: 'Team', key: 'k' }, content: participants([ALICE]) }), ctx)![0];

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
  });

  it('answers participant changes per participant and applies only those that succeed', () => {
    const jid = `${create().attrs.id}@g.us`;
    const change = (action: string, jids: string[]) =>
      children(answerGroupIq(groupIq(jid, 'set', { tag: action, attrs: {}, content: participants(jids) }), ctx)![0]).map((p) => [p.attrs.jid, p.attrs.error ?? '200']);
    expect(change('add', [BOB, ALICE, 'nobody'])).toEqual([[BOB, '200'], [ALICE, '409'], ['nobody', '404']]);
    expect(network.listGroups('s1')[0].participants).toEqual([OWNER, ALICE, BOB]);
    expect(change('promote', [ALICE])).toEqual([[ALICE, '200']]);
    expect(change('demote', [ALICE, OWNER])).toEqual([[ALICE, '200'], [OWNER, '406']]);
    expect(change('remove', [BOB, '15551119999@s.whatsapp.net'])).toEqual([[BOB, '200'], ['15551119999@s.whatsapp.net', '404']]);
    expect(network.listGroups('s1')[0].participants).toEqual([OWNER, ALICE]);
    // the network told the device of each change that happened (its w:gp2 notifications)
    const told = frames.filter((f) => f.type === 'group-participants').map((f) => f.type === 'group-participants' && [f.action, f.participants]);
    expect(told).toEqual([['add', [BOB]], ['promote', [ALICE]], ['demote', [ALICE]], ['remove', [BOB]]]);
  });

  it('refuses a non-admin per participant, and a query by a non-member or of an unknown group', () => {
    const jid = `${create().attrs.id}@g.us`;
    ctx.roles.of(network.listGroups('s1')[0]).delete(OWNER);
    const reply = answerGroupIq(groupIq(jid, 'set', { tag: 'add', attrs: {}, content: participants([BOB]) }), ctx)![0];
    expect(children(reply).map((p) => p.attrs.error)).toEqual(['403']);
    const unknown = iqReply(groupIq('1-2@g.us', 'get', { tag: 'query', attrs: {} }), () => answerGroupIq(groupIq('1-2@g.us', 'get', { tag: 'query', attrs: {} }), ctx));
    expect(child(unknown, 'error')?.attrs).toEqual({ code: '404', text: 'item-not-found' });
    expect(unknown.attrs.from).toBe('1-2@g.us');
    const stranger = { ...ctx, account: { ...ctx.account, jid: BOB } };
    expect(() => answerGroupIq(groupIq(jid, 'get', { tag: 'query', attrs: {} }), stranger)).toThrow(IqError);
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
