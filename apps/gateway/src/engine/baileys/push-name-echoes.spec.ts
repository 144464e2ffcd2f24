import type { WAMessage } from '@whiskeysockets/baileys';
import { PushNameEchoes } from './push-name-echoes';

const ALICE = '491701111111@s.whatsapp.net';

function message(pushName: string, key: Partial<WAMessage['key']> = {}): WAMessage {
  return { key: { id: 'M1', remoteJid: ALICE, fromMe: false, ...key }, pushName, message: { conversation: 'hi' } };
}

describe('PushNameEchoes', () => {
  it('drops the contacts.update Baileys emits after a message with the push name the message already carried', () => {
    const echoes = new PushNameEchoes();
    echoes.sawMessage(message('Alice'));
    expect(echoes.news([{ id: ALICE, notify: 'Alice', verifiedName: undefined }])).toEqual([]);
  });

  it('passes a new push name, other contact news, and an echo for a sender it has not seen', () => {
    const echoes = new PushNameEchoes();
    echoes.sawMessage(message('Alice'));
    expect(echoes.news([{ id: ALICE, notify: 'Alice B.' }])).toEqual([{ id: ALICE, notify: 'Alice B.' }]);
    expect(echoes.news([{ id: ALICE, notify: 'Alice B.', imgUrl: 'changed' }])).toHaveLength(1);
    expect(echoes.news([{ id: '491702222222@s.whatsapp.net', notify: 'Bob' }])).toHaveLength(1);
    // said once through contacts.update, the same name again is an echo
    expect(echoes.news([{ id: '491702222222@s.whatsapp.net', notify: 'Bob' }])).toEqual([]);
  });

  it('knows a group sender by its participant, without the device part', () => {
    const echoes = new PushNameEchoes();
    echoes.sawMessage(message('Carol', { remoteJid: '120363000000000001@g.us', participant: '491703333333:4@s.whatsapp.net' }));
    expect(echoes.news([{ id: '491703333333@s.whatsapp.net', notify: 'Carol' }])).toEqual([]);
    // our own messages tell nothing of a contact
    echoes.sawMessage(message('Me', { fromMe: true, remoteJid: '491704444444@s.whatsapp.net' }));
    expect(echoes.news([{ id: '491704444444@s.whatsapp.net', notify: 'Me' }])).toHaveLength(1);
  });

  it('remembers a bounded number of senders, the oldest go first', () => {
    const echoes = new PushNameEchoes(2);
    for (const n of ['1', '2', '3']) echoes.sawMessage(message(`P${n}`, { remoteJid: `4917000000${n}@s.whatsapp.net` }));
    expect(echoes.news([{ id: '49170000001@s.whatsapp.net', notify: 'P1' }])).toHaveLength(1);
    expect(echoes.news([{ id: '49170000003@s.whatsapp.net', notify: 'P3' }])).toEqual([]);
  });
});
