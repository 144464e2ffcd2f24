import { EventEmitter } from 'node:events';
import type { WASocket } from '@whiskeysockets/baileys';
import { DomainError, EDIT_WINDOW_MS } from '@app/contracts';
import type { BaileysActionContext } from './context';
import { BAILEYS_MESSAGE_ACTIONS, callerOf, watchCalls } from './message-actions';

const ALICE = '15550002222@s.whatsapp.net';
const OWN_KEY = { waMessageId: '3EB0OWN', chatJid: ALICE, fromMe: true, participant: null };

function fakeSocket() {
  const ev = new EventEmitter();
  return {
    ev: { on: (name: string, fn: (...a: unknown[]) => void) => ev.on(name, fn) },
    emit: (name: string, payload: unknown) => ev.emit(name, payload),
    sendMessage: jest.fn(async () => undefined),
    rejectCall: jest.fn(async () => undefined),
  };
}

const contextOf = (sock: ReturnType<typeof fakeSocket>) => ({ sock: sock as unknown as WASocket }) as BaileysActionContext;
const codeOf = async (p: Promise<unknown> | unknown) => {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof DomainError ? err.code : String(err);
  }
};

describe('Baileys message actions', () => {
  it('edits an own message as Baileys builds an edit: sendMessage(jid, {text, edit: key})', async () => {
    const sock = fakeSocket();
    const result = await BAILEYS_MESSAGE_ACTIONS['messages.edit'](contextOf(sock), { key: OWN_KEY, text: 'better', sentAt: Date.now() - 1000 });
    expect(result.editedAt).toEqual(expect.any(Number));
    expect(sock.sendMessage).toHaveBeenCalledWith(ALICE, { text: 'better', edit: { remoteJid: ALICE, id: '3EB0OWN', fromMe: true } });
  });

  it('refuses (conflict) an edit of another’s message or past the edit window, sending nothing', async () => {
    const sock = fakeSocket();
    const ctx = contextOf(sock);
    expect(await codeOf(BAILEYS_MESSAGE_ACTIONS['messages.edit'](ctx, { key: { ...OWN_KEY, fromMe: false }, text: 'x', sentAt: Date.now() }))).toBe('conflict');
    expect(await codeOf(BAILEYS_MESSAGE_ACTIONS['messages.edit'](ctx, { key: OWN_KEY, text: 'x', sentAt: Date.now() - EDIT_WINDOW_MS - 1 }))).toBe('conflict');
    expect(sock.sendMessage).not.toHaveBeenCalled();
  });

  it('deletes an own message for everyone: sendMessage(jid, {delete: key}); another’s is refused', async () => {
    const sock = fakeSocket();
    await BAILEYS_MESSAGE_ACTIONS['messages.revoke'](contextOf(sock), { key: OWN_KEY });
    expect(sock.sendMessage).toHaveBeenCalledWith(ALICE, { delete: { remoteJid: ALICE, id: '3EB0OWN', fromMe: true } });
    expect(await codeOf(BAILEYS_MESSAGE_ACTIONS['messages.revoke'](contextOf(sock), { key: { ...OWN_KEY, fromMe: false } }))).toBe('conflict');
    expect(sock.sendMessage).toHaveBeenCalledTimes(1);
  });

  it('rejects a call with its caller: given, or remembered from the socket’s call offers', async () => {
    const sock = fakeSocket();
    watchCalls(sock as unknown as WASocket);
    sock.emit('call', [{ id: 'CALL1', from: ALICE, status: 'offer' }, { id: 'CALL0', from: ALICE, status: 'timeout' }]);
    expect(callerOf(sock as unknown as WASocket, 'CALL1')).toBe(ALICE);
    expect(callerOf(sock as unknown as WASocket, 'CALL0')).toBeNull();

    await BAILEYS_MESSAGE_ACTIONS['calls.reject'](contextOf(sock), { callId: 'CALL1' });
    expect(sock.rejectCall).toHaveBeenLastCalledWith('CALL1', ALICE);
    await BAILEYS_MESSAGE_ACTIONS['calls.reject'](contextOf(sock), { callId: 'CALL9', from: '15550003333@s.whatsapp.net' });
    expect(sock.rejectCall).toHaveBeenLastCalledWith('CALL9', '15550003333@s.whatsapp.net');
    expect(await codeOf(BAILEYS_MESSAGE_ACTIONS['calls.reject'](contextOf(sock), { callId: 'UNKNOWN' }))).toBe('not_found');
    expect(sock.rejectCall).toHaveBeenCalledTimes(2);
  });

  it('refuses a call no longer ringing (rejected here, or ended on the network) as conflict, and maps the server\'s 404/409', async () => {
    const sock = fakeSocket();
    watchCalls(sock as unknown as WASocket);
    sock.emit('call', [{ id: 'CALL1', from: ALICE, status: 'offer' }, { id: 'CALL2', from: ALICE, status: 'offer' }, { id: 'CALL3', from: ALICE, status: 'offer' }]);
    await BAILEYS_MESSAGE_ACTIONS['calls.reject'](contextOf(sock), { callId: 'CALL1' });
    expect(await codeOf(BAILEYS_MESSAGE_ACTIONS['calls.reject'](contextOf(sock), { callId: 'CALL1' }))).toBe('conflict');
    sock.emit('call', [{ id: 'CALL2', from: ALICE, status: 'terminate' }]);
    expect(await codeOf(BAILEYS_MESSAGE_ACTIONS['calls.reject'](contextOf(sock), { callId: 'CALL2' }))).toBe('conflict');
    expect(sock.rejectCall).toHaveBeenCalledTimes(1);
    // WhatsApp's refusal comes back as Baileys' Boom, the code in `data`
    sock.rejectCall.mockRejectedValueOnce(Object.assign(new Error('conflict'), { data: 409 }));
    expect(await codeOf(BAILEYS_MESSAGE_ACTIONS['calls.reject'](contextOf(sock), { callId: 'CALL3' }))).toBe('conflict');
    sock.rejectCall.mockRejectedValueOnce(Object.assign(new Error('item-not-found'), { data: 404 }));
    expect(await codeOf(BAILEYS_MESSAGE_ACTIONS['calls.reject'](contextOf(sock), { callId: 'CALL9', from: ALICE }))).toBe('not_found');
  });
});
