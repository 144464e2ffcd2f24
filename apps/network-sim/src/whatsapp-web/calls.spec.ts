import { callStanzaAck, callTerminate, deviceCallReject } from './calls';
import { IqError } from './iq';

describe('calls over the WhatsApp Web door (the device\'s reject, the ack, terminate)', () => {
  const CALLER = '15550006666@s.whatsapp.net';
  // what Baileys rc14's rejectCall sends (query gives it an id)
  const reject = {
    tag: 'call',
    attrs: { from: '15550002222:1@s.whatsapp.net', to: CALLER, id: 'q1' },
    content: [{ tag: 'reject', attrs: { 'call-id': 'C1', 'call-creator': CALLER, count: '0' } }],
  };

  it('reads the call and its caller from Baileys\' reject; other call stanzas are not rejections', () => {
    expect(deviceCallReject(reject)).toEqual({ callId: 'C1', caller: CALLER });
    expect(deviceCallReject({ tag: 'call', attrs: { to: CALLER, id: 'q2' }, content: [{ tag: 'accept', attrs: { 'call-id': 'C1' } }] })).toBeNull();
  });

  it('acks with the stanza\'s id (what Baileys\' query waits for), an error child when refused, and terminates the call', () => {
    expect(callStanzaAck(reject, null)).toEqual({ tag: 'ack', attrs: { id: 'q1', class: 'call', from: 's.whatsapp.net', type: 'reject' } });
    expect(callStanzaAck(reject, new IqError(409, 'conflict')).content).toEqual([{ tag: 'error', attrs: { code: '409', text: 'conflict' } }]);
    const end = callTerminate('s9', { callId: 'C1', caller: CALLER });
    expect(end).toMatchObject({ tag: 'call', attrs: { from: CALLER, id: 's9' }, content: [{ tag: 'terminate', attrs: { 'call-id': 'C1', 'call-creator': CALLER } }] });
  });
});
