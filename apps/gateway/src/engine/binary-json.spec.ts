import { decodeBinaryJson, encodeBinaryJson } from './binary-json';

describe('binary JSON', () => {
  it('round-trips Buffers and Uint8Arrays (as Buffers) at any depth', () => {
    const value = {
      key: Buffer.from([0, 1, 254, 255]),
      pair: { public: new Uint8Array([5, 6, 7]), private: Buffer.alloc(0) },
      list: [Buffer.from('x'), 'text', 3, null, { deep: new Uint8Array([9]) }],
      plain: { type: 'not a buffer', data: 'kept' },
    };
    const back = decodeBinaryJson<typeof value>(encodeBinaryJson(value));
    expect(Buffer.isBuffer(back.key)).toBe(true);
    expect(back.key).toEqual(Buffer.from([0, 1, 254, 255]));
    expect(back.pair.public).toEqual(Buffer.from([5, 6, 7]));
    expect(back.pair.private).toEqual(Buffer.alloc(0));
    expect(back.list).toEqual([Buffer.from('x'), 'text', 3, null, { deep: Buffer.from([9]) }]);
    expect(back.plain).toEqual({ type: 'not a buffer', data: 'kept' });
  });

  it("writes Baileys' BufferJSON shape (base64 data), so state moved between stores stays readable", () => {
    expect(encodeBinaryJson({ k: Buffer.from([1, 2, 3]) })).toBe('{"k":{"type":"Buffer","data":"AQID"}}');
    expect(decodeBinaryJson('{"k":{"type":"Buffer","data":"AQID"}}')).toEqual({ k: Buffer.from([1, 2, 3]) });
  });

  it("reads Node's own Buffer JSON (byte arrays) too", () => {
    expect(decodeBinaryJson(JSON.stringify({ k: Buffer.from([4, 5]) }))).toEqual({ k: Buffer.from([4, 5]) });
  });

  it('keeps objects with numeric keys as objects (no guessing that they were bytes)', () => {
    expect(decodeBinaryJson('{"1":2,"3":4}')).toEqual({ '1': 2, '3': 4 });
  });
});
