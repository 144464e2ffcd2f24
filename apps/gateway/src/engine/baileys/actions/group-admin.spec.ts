import type { GroupMetadata, WASocket } from '@whiskeysockets/baileys';
import pino from 'pino';
import { DomainError } from '@app/contracts';
import type { EngineEvent } from '../../engine.interface';
import type { BaileysActionContext } from './context';
import { BAILEYS_GROUP_ACTIONS, groupErrorCode, participantStatusOf } from './group-admin';

const GROUP = '120363000000000001@g.us';
const OWN = '491701234567@s.whatsapp.net';
const ALICE = '15550001111@s.whatsapp.net';
const BOB = '15550002222@s.whatsapp.net';

/** Baileys' errors for a refused query: assertNodeErrorFree puts the code in `data`, extractGroupMetadata in the status. */
const refusedWith = (code: number) => Object.assign(new Error('not-authorized'), { data: code, output: { statusCode: 500 } });
const metadataRefused = (code: number) => Object.assign(new Error('item-not-found'), { output: { statusCode: code } });

const META: GroupMetadata = {
  id: GROUP,
  addressingMode: 'lid' as GroupMetadata['addressingMode'],
  subject: 'Team',
  desc: 'rules',
  owner: '98765@lid',
  ownerPn: OWN,
  announce: false,
  restrict: true,
  participants: [
    { id: '98765@lid', phoneNumber: OWN, admin: 'superadmin' },
    { id: '11110@lid', phoneNumber: ALICE, admin: 'admin' },
    { id: '11111@lid', phoneNumber: BOB, admin: null },
  ],
};

function fakeSocket() {
  return {
    groupMetadata: jest.fn(async (_jid: string) => META),
    profilePictureUrl: jest.fn(async (_jid: string, _type?: string, _timeout?: number): Promise<string | undefined> => 'https://pps.whatsapp.net/g.jpg'),
    groupUpdateSubject: jest.fn(async (_jid: string, _subject: string) => undefined),
    groupUpdateDescription: jest.fn(async (_jid: string, _description?: string) => undefined),
    groupSettingUpdate: jest.fn(async (_jid: string, _setting: string) => undefined),
    groupParticipantsUpdate: jest.fn(async (_jid: string, participants: string[], _action: string) =>
      participants.map((jid) => ({ status: '200', jid })),
    ),
    groupLeave: jest.fn(async (_jid: string) => undefined),
    groupInviteCode: jest.fn(async (_jid: string): Promise<string | undefined> => 'CODE1'),
    groupRevokeInvite: jest.fn(async (_jid: string): Promise<string | undefined> => 'CODE2'),
    groupAcceptInvite: jest.fn(async (_code: string): Promise<string | undefined> => GROUP),
    updateProfilePicture: jest.fn(async (_jid: string, _content: Buffer) => undefined),
  };
}

function context(sock = fakeSocket()) {
  const events: EngineEvent[] = [];
  const ctx: BaileysActionContext = {
    sessionId: 'ses_1',
    sock: sock as unknown as WASocket,
    ownJid: () => OWN,
    runtime: {} as BaileysActionContext['runtime'],
    lookups: null,
    emit: (e) => events.push(e),
    logger: pino({ level: 'silent' }),
  };
  return { ctx, sock, events };
}

describe('Baileys group administration (actions/group-admin.ts)', () => {
  it('group.metadata: members by number with their rights, the picture, and the network form reported for storing', async () => {
    const { ctx, sock, events } = context();
    const details = await BAILEYS_GROUP_ACTIONS['group.metadata'](ctx, { groupJid: GROUP });
    expect(sock.groupMetadata).toHaveBeenCalledWith(GROUP);
    expect(sock.profilePictureUrl).toHaveBeenCalledWith(GROUP, 'image', expect.any(Number));
    expect(details).toEqual({
      groupJid: GROUP,
      subject: 'Team',
      description: 'rules',
      ownerJid: OWN,
      participants: 3,
      isAnnounce: false,
      isLocked: true,
      participantList: [
        { jid: OWN, isAdmin: true, isSuperAdmin: true },
        { jid: ALICE, isAdmin: true, isSuperAdmin: false },
        { jid: BOB, isAdmin: false, isSuperAdmin: false },
      ],
      pictureUrl: 'https://pps.whatsapp.net/g.jpg',
    });
    expect(events).toEqual([expect.objectContaining({ type: 'group-metadata', group: expect.objectContaining({ groupJid: GROUP, admins: [OWN, ALICE], superAdmins: [OWN] }) })]);
  });

  it('group.metadata: no picture (or a refused one) is null; a group the account is not in is 404', async () => {
    const { ctx, sock } = context();
    sock.profilePictureUrl.mockRejectedValueOnce(metadataRefused(404));
    expect((await BAILEYS_GROUP_ACTIONS['group.metadata'](ctx, { groupJid: GROUP })).pictureUrl).toBeNull();
    sock.groupMetadata.mockRejectedValueOnce(metadataRefused(404));
    await expect(BAILEYS_GROUP_ACTIONS['group.metadata'](ctx, { groupJid: GROUP })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('group.update: one Baileys call per field, in WhatsApp Web’s words, then the group as it now is', async () => {
    const { ctx, sock } = context();
    await BAILEYS_GROUP_ACTIONS['group.update'](ctx, { groupJid: GROUP, subject: 'New', description: '', isAnnounce: true, isLocked: false });
    expect(sock.groupUpdateSubject).toHaveBeenCalledWith(GROUP, 'New');
    expect(sock.groupUpdateDescription).toHaveBeenCalledWith(GROUP, '');
    expect(sock.groupSettingUpdate.mock.calls).toEqual([
      [GROUP, 'announcement'],
      [GROUP, 'unlocked'],
    ]);
    expect(sock.groupMetadata).toHaveBeenCalledTimes(1);

    const only = context();
    await BAILEYS_GROUP_ACTIONS['group.update'](only.ctx, { groupJid: GROUP, isLocked: true });
    expect(only.sock.groupUpdateSubject).not.toHaveBeenCalled();
    expect(only.sock.groupSettingUpdate.mock.calls).toEqual([[GROUP, 'locked']]);
  });

  it('group.update by a non-admin: WhatsApp’s 401/403 is 409 conflict (not_admin), and nothing further is asked', async () => {
    for (const code of [401, 403]) {
      const { ctx, sock } = context();
      sock.groupSettingUpdate.mockRejectedValueOnce(refusedWith(code));
      const err = await Promise.resolve(BAILEYS_GROUP_ACTIONS['group.update'](ctx, { groupJid: GROUP, isAnnounce: true, isLocked: true })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: 'conflict', details: { reason: 'not_admin', whatsappCode: code } });
      expect(sock.groupSettingUpdate).toHaveBeenCalledTimes(1);
      expect(sock.groupMetadata).not.toHaveBeenCalled();
    }
  });

  it('group.participants: each participant’s answer mapped, in the order asked', async () => {
    const { ctx, sock } = context();
    sock.groupParticipantsUpdate.mockResolvedValueOnce([
      { status: '409', jid: BOB },
      { status: '200', jid: ALICE },
      { status: '403', jid: '15550003333@s.whatsapp.net' },
      { status: '404', jid: '15550004444@s.whatsapp.net' },
      { status: '408', jid: '15550005555@s.whatsapp.net' },
    ]);
    const asked = [ALICE, BOB, '15550003333@s.whatsapp.net', '15550004444@s.whatsapp.net', '15550005555@s.whatsapp.net'];
    const { data } = await BAILEYS_GROUP_ACTIONS['group.participants'](ctx, { groupJid: GROUP, action: 'add', participants: asked });
    expect(sock.groupParticipantsUpdate).toHaveBeenCalledWith(GROUP, asked, 'add');
    expect(data).toEqual([
      { jid: ALICE, status: 'ok' },
      { jid: BOB, status: 'already' },
      { jid: '15550003333@s.whatsapp.net', status: 'invite_required' },
      { jid: '15550004444@s.whatsapp.net', status: 'not_on_whatsapp' },
      { jid: '15550005555@s.whatsapp.net', status: 'recently_left' },
    ]);
  });

  it('group.participants refused as a whole for want of a right: every participant is not_admin; other refusals are errors', async () => {
    const { ctx, sock } = context();
    sock.groupParticipantsUpdate.mockRejectedValueOnce(refusedWith(403));
    await expect(BAILEYS_GROUP_ACTIONS['group.participants'](ctx, { groupJid: GROUP, action: 'remove', participants: [ALICE, BOB] })).resolves.toEqual({
      data: [
        { jid: ALICE, status: 'not_admin' },
        { jid: BOB, status: 'not_admin' },
      ],
    });
    sock.groupParticipantsUpdate.mockRejectedValueOnce(refusedWith(404));
    await expect(BAILEYS_GROUP_ACTIONS['group.participants'](ctx, { groupJid: GROUP, action: 'remove', participants: [ALICE] })).rejects.toMatchObject({ code: 'not_found' });
  });

  it.each([
    ['add', '200', 'ok'],
    ['add', '403', 'invite_required'],
    ['remove', '403', 'not_admin'],
    ['add', '404', 'not_on_whatsapp'],
    ['remove', '404', 'not_in_group'],
    ['promote', '409', 'already'],
    ['add', '500', 'group_full'],
    ['demote', '401', 'not_admin'],
    ['add', '999', 'error'],
  ] as const)('participant status: %s answered %s is %s', (action, code, status) => {
    expect(participantStatusOf(action, code)).toBe(status);
  });

  it('leave, invite code, revoke, join and picture call Baileys’ own functions', async () => {
    const { ctx, sock } = context();
    await expect(BAILEYS_GROUP_ACTIONS['group.leave'](ctx, { groupJid: GROUP })).resolves.toEqual({});
    expect(sock.groupLeave).toHaveBeenCalledWith(GROUP);
    await expect(BAILEYS_GROUP_ACTIONS['group.invite-code'](ctx, { groupJid: GROUP })).resolves.toEqual({ code: 'CODE1' });
    await expect(BAILEYS_GROUP_ACTIONS['group.invite-revoke'](ctx, { groupJid: GROUP })).resolves.toEqual({ code: 'CODE2' });
    const joined = await BAILEYS_GROUP_ACTIONS['group.join'](ctx, { code: 'CODE2' });
    expect(sock.groupAcceptInvite).toHaveBeenCalledWith('CODE2');
    expect(joined.groupJid).toBe(GROUP);
    await BAILEYS_GROUP_ACTIONS['group.picture'](ctx, { groupJid: GROUP, media: { data: Buffer.from('png').toString('base64'), mimetype: 'image/png' } });
    expect(sock.updateProfilePicture).toHaveBeenCalledWith(GROUP, Buffer.from('png'));
  });

  it('an invite refused: a revoked code is 404, a non-admin asking for the code is 409', async () => {
    const { ctx, sock } = context();
    sock.groupAcceptInvite.mockRejectedValueOnce(refusedWith(410));
    await expect(BAILEYS_GROUP_ACTIONS['group.join'](ctx, { code: 'OLD' })).rejects.toMatchObject({ code: 'not_found' });
    sock.groupInviteCode.mockRejectedValueOnce(refusedWith(401));
    await expect(BAILEYS_GROUP_ACTIONS['group.invite-code'](ctx, { groupJid: GROUP })).rejects.toMatchObject({ code: 'conflict', details: { reason: 'not_admin' } });
  });

  it('reads WhatsApp’s code where Baileys puts it', () => {
    expect(groupErrorCode(refusedWith(403))).toBe(403);
    expect(groupErrorCode(metadataRefused(404))).toBe(404);
    expect(groupErrorCode(new Error('socket closed'))).toBeNull();
  });
});
