import { OfflineBatch } from './offline-delivery';

describe('OfflineBatch', () => {
  it('what is handed over during the batch is stamped offline when sent, and the marker counts what was sent', () => {
    const batch = new OfflineBatch();
    expect(batch.open).toBe(false);
    batch.begin();
    // handed over during the batch: decided now, stamped when the (asynchronous) send happens
    const held = [batch.open, batch.open];
    batch.end();
    expect(batch.open).toBe(false);
    // a live stanza handed over after the batch ended carries no offline attribute and does not count
    expect(batch.stamp(batch.open)).toEqual({});
    expect(held.map((offline) => batch.stamp(offline))).toEqual([{ offline: '1' }, { offline: '1' }]);
    expect(batch.marker()).toEqual({ tag: 'ib', attrs: { from: 's.whatsapp.net' }, content: [{ tag: 'offline', attrs: { count: '2' } }] });
  });

  it('an empty batch still ends with a marker (count 0): it ends Baileys\' initial buffering', () => {
    const batch = new OfflineBatch();
    batch.begin();
    batch.end();
    expect(batch.marker().content).toEqual([{ tag: 'offline', attrs: { count: '0' } }]);
  });

  it('a new login starts a new count', () => {
    const batch = new OfflineBatch();
    batch.begin();
    batch.stamp(true);
    batch.end();
    batch.begin();
    batch.end();
    expect(batch.marker().content).toEqual([{ tag: 'offline', attrs: { count: '0' } }]);
  });
});
