import { OfflineBatch } from './offline-delivery';

describe('OfflineBatch', () => {
  it('stamps what is handed over during the batch as offline and counts what was sent in the marker', () => {
    const batch = new OfflineBatch();
    expect(batch.open).toBe(false);
    batch.begin();
    expect(batch.open).toBe(true);
    expect(batch.stamp(true)).toEqual({ offline: '1' });
    expect(batch.stamp(true)).toEqual({ offline: '1' });
    expect(batch.close()).toEqual({ tag: 'ib', attrs: { from: 's.whatsapp.net' }, content: [{ tag: 'offline', attrs: { count: '2' } }] });
    expect(batch.open).toBe(false);
    // a stanza handed over live carries no offline attribute and does not count
    expect(batch.stamp(false)).toEqual({});
  });

  it('an empty batch still ends with a marker (count 0): it ends Baileys\' initial buffering', () => {
    const batch = new OfflineBatch();
    batch.begin();
    expect(batch.close().content).toEqual([{ tag: 'offline', attrs: { count: '0' } }]);
  });

  it('a new login starts a new count', () => {
    const batch = new OfflineBatch();
    batch.begin();
    batch.stamp(true);
    batch.close();
    batch.begin();
    expect(batch.close().content).toEqual([{ tag: 'offline', attrs: { count: '0' } }]);
  });
});
