import { AckLedger, receiptKey } from './ack-ledger';

describe('AckLedger', () => {
  const ledger = () => {
    const settled: string[] = [];
    return { settled, ledger: new AckLedger((eventId) => settled.push(eventId)) };
  };

  it('settles an event once every stanza sent for it is acknowledged, once', () => {
    const { settled, ledger: l } = ledger();
    l.expect('e1', [
      ['notification', 'n1'],
      ['notification', 'n2'],
    ]);
    l.acked('notification', 'n1');
    expect(settled).toEqual([]);
    l.acked('notification', 'n2');
    l.acked('notification', 'n2');
    expect(settled).toEqual(['e1']);
    expect(l.size).toBe(0);
  });

  it('keeps the kinds apart: a call ack does not settle a message with the same id', () => {
    const { settled, ledger: l } = ledger();
    l.expect('e1', [['message', 'X']]);
    l.acked('call', 'X');
    l.acked('receipt', receiptKey('X', 'read'));
    expect(settled).toEqual([]);
    l.receiptFor('X');
    expect(settled).toEqual(['e1']);
  });

  it('settles an event with no stanzas at once', () => {
    const { settled, ledger: l } = ledger();
    l.expect('e1', []);
    expect(settled).toEqual(['e1']);
  });

  it('runs what a receipt confirms once, with the acknowledgement', () => {
    const { settled, ledger: l } = ledger();
    const taken: string[] = [];
    l.onTaken('M', () => taken.push('M'));
    l.expect('e1', [['message', 'M']]);
    l.receiptFor('M');
    l.receiptFor('M');
    expect(taken).toEqual(['M']);
    expect(settled).toEqual(['e1']);
  });

  it('tells receipts apart by type and participant', () => {
    expect(receiptKey('X', 'read', 'a@s.whatsapp.net')).not.toBe(receiptKey('X', 'read', 'b@s.whatsapp.net'));
    expect(receiptKey('X', undefined)).not.toBe(receiptKey('X', 'read'));
  });
});
