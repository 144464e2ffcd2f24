import type { SessionActionName, SimGroup, SimNetworkFrame } from '@app/contracts';
import { DeviceLink, SimNetwork } from '../sim-network';

class RecordingLink implements DeviceLink {
  frames: SimNetworkFrame[] = [];
  send(frame: SimNetworkFrame): void {
    this.frames.push(frame);
  }
  close(): void {}
  drop(): void {}
  groupEvents() {
    return this.frames.filter((f) => f.type === 'group-update' || f.type === 'group-participants').map((f) => {
      const { eventId: _eventId, ...event } = f as SimNetworkFrame & { eventId: string };
      return event;
    });
  }
}

const jid = (phone: string) => `${phone}@s.whatsapp.net`;

/** Three paired devices on one network: `admin` creates a group with `member` in it; `outsider` is not in it. */
function world() {
  const network = new SimNetwork({ qrIntervalMs: 60_000 });
  const links: Record<string, RecordingLink> = {};
  for (const [session, phone] of [['admin', '15550000001'], ['member', '15550000002'], ['outsider', '15550000003']]) {
    links[session] = new RecordingLink();
    network.attach(session, links[session], null);
    network.scan(session, { phoneNumber: phone });
  }
  const group = network.request('admin', links.admin, 'createGroup', { subject: 'Team', participants: [jid('15550000002')] }) as SimGroup;
  const act = (session: string, action: SessionActionName, args: object) => network.request(session, links[session], 'action', { action, args });
  return { network, links, group, act };
}

describe('the simulator plays group administration as WhatsApp does (actions/group-admin.ts)', () => {
  it('the creator is the super admin; a member is refused settings and invites with not_admin, and per participant', () => {
    const { network, group, act } = world();
    expect(act('member', 'group.metadata', { groupJid: group.groupJid })).toMatchObject({
      participantList: [
        { jid: jid('15550000001'), isAdmin: true, isSuperAdmin: true },
        { jid: jid('15550000002'), isAdmin: false, isSuperAdmin: false },
      ],
    });
    expect(() => act('member', 'group.update', { groupJid: group.groupJid, isAnnounce: true })).toThrow(expect.objectContaining({ code: 'conflict', details: expect.objectContaining({ reason: 'not_admin' }) }));
    expect(() => act('member', 'group.invite-code', { groupJid: group.groupJid })).toThrow(expect.objectContaining({ code: 'conflict' }));
    expect(act('member', 'group.participants', { groupJid: group.groupJid, action: 'add', participants: [jid('15550000003')] })).toEqual({
      data: [{ jid: jid('15550000003'), status: 'not_admin' }],
    });
    // an unlocked group's info is any member's
    expect(act('member', 'group.update', { groupJid: group.groupJid, subject: 'Ours' })).toMatchObject({ subject: 'Ours' });
    expect(network.group(group.groupJid).participants).toHaveLength(2);
  });

  it('an outsider sees nothing of the group; a bad jid or action is a validation error naming the field', () => {
    const { group, act } = world();
    expect(() => act('outsider', 'group.metadata', { groupJid: group.groupJid })).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(() => act('admin', 'group.metadata', { groupJid: 'nope' })).toThrow(expect.objectContaining({ code: 'validation_error', details: { groupJid: expect.any(String) } }));
    expect(() => act('admin', 'group.participants', { groupJid: group.groupJid, action: 'kick', participants: [jid('15550000003')] })).toThrow(
      expect.objectContaining({ code: 'validation_error', details: { action: expect.any(String) } }),
    );
  });

  it('changes reach every member device with the actor; an invite brings in a second device; leave tells the others', () => {
    const { network, links, group, act } = world();
    act('admin', 'group.participants', { groupJid: group.groupJid, action: 'promote', participants: [jid('15550000002')] });
    const promoted = { type: 'group-participants', groupJid: group.groupJid, action: 'promote', participants: [jid('15550000002')], actor: jid('15550000001') };
    expect(links.admin.groupEvents()).toEqual([promoted]);
    expect(links.member.groupEvents()).toEqual([promoted]);
    expect(links.outsider.groupEvents()).toEqual([]);

    const { code } = act('admin', 'group.invite-code', { groupJid: group.groupJid }) as { code: string };
    expect(act('outsider', 'group.join', { code })).toMatchObject({ groupJid: group.groupJid, participants: 3 });
    const joined = { type: 'group-participants', groupJid: group.groupJid, action: 'add', participants: [jid('15550000003')], actor: jid('15550000003') };
    expect(links.outsider.groupEvents()).toEqual([joined]);
    expect(links.member.groupEvents()).toEqual([promoted, joined]);

    const { code: fresh } = act('admin', 'group.invite-revoke', { groupJid: group.groupJid }) as { code: string };
    expect(fresh).not.toBe(code);
    expect(() => act('outsider', 'group.join', { code })).toThrow(expect.objectContaining({ code: 'not_found' }));

    act('member', 'group.leave', { groupJid: group.groupJid });
    expect(links.member.groupEvents().at(-1)).toEqual({ type: 'group-participants', groupJid: group.groupJid, action: 'remove', participants: [jid('15550000002')], actor: jid('15550000002') });
    expect(network.world.groupAdmin.state(network.group(group.groupJid))).toMatchObject({ admins: [jid('15550000001')], participants: [jid('15550000001'), jid('15550000003')] });
  });

  it('answers each participant: ok, not_on_whatsapp, already, not_in_group; the creator cannot be demoted', () => {
    const { group, act } = world();
    expect(act('admin', 'group.participants', { groupJid: group.groupJid, action: 'add', participants: [jid('15550000003'), jid('15559999999'), jid('15550000002')] })).toEqual({
      data: [
        { jid: jid('15550000003'), status: 'ok' },
        { jid: jid('15559999999'), status: 'not_on_whatsapp' },
        { jid: jid('15550000002'), status: 'already' },
      ],
    });
    expect(act('admin', 'group.participants', { groupJid: group.groupJid, action: 'demote', participants: [jid('15550000001'), jid('15550000002'), jid('15559999999')] })).toEqual({
      data: [
        { jid: jid('15550000001'), status: 'not_admin' },
        { jid: jid('15550000002'), status: 'already' },
        { jid: jid('15559999999'), status: 'not_in_group' },
      ],
    });
  });

  it('counts metadata reads and keeps the picture a member set', () => {
    const { network, group, act } = world();
    act('admin', 'group.metadata', { groupJid: group.groupJid });
    act('member', 'group.metadata', { groupJid: group.groupJid });
    act('member', 'group.picture', { groupJid: group.groupJid, media: { data: Buffer.from('img').toString('base64'), mimetype: 'image/jpeg' } });
    const state = network.world.groupAdmin.state(network.group(group.groupJid));
    expect(state.metadataReads).toBe(2);
    expect(state.pictureSha256).toMatch(/^[0-9a-f]{64}$/);
    act('admin', 'group.update', { groupJid: group.groupJid, isLocked: true });
    expect(() => act('member', 'group.picture', { groupJid: group.groupJid, media: { data: 'aW1n', mimetype: 'image/jpeg' } })).toThrow(expect.objectContaining({ code: 'conflict' }));
  });
});
