import { encodeFrame, FrameReader } from './noise-server';

const INTRO = Buffer.from([0x57, 0x41, 6, 3]);

describe('FrameReader (WhatsApp Web framing)', () => {
  it('strips the intro once and splits 3-byte length-prefixed frames, across and within chunks', () => {
    const reader = new FrameReader(INTRO);
    const stream = Buffer.concat([INTRO, encodeFrame(Buffer.from('hello')), encodeFrame(Buffer.alloc(70000, 1)), encodeFrame(Buffer.from('x'))]);
    const frames = [...reader.push(stream.subarray(0, 2)), ...reader.push(stream.subarray(2, 9)), ...reader.push(stream.subarray(9))];
    expect(frames.map((f) => f.length)).toEqual([5, 70000, 1]);
    expect(frames[0].toString()).toBe('hello');
    // no second intro: the next bytes are a frame
    expect(reader.push(encodeFrame(Buffer.from('again')))[0].toString()).toBe('again');
  });

  it('skips an edge-routing header before the intro', () => {
    const routing = Buffer.from([1, 2, 3, 4, 5]);
    const header = Buffer.concat([Buffer.from('ED'), Buffer.from([0, 1, 0, 0, routing.length]), routing, INTRO]);
    const frames = new FrameReader(INTRO).push(Buffer.concat([header, encodeFrame(Buffer.from('hi'))]));
    expect(frames.map((f) => f.toString())).toEqual(['hi']);
  });

  it('refuses a stream that does not start with the WhatsApp Web intro', () => {
    expect(() => new FrameReader(INTRO).push(Buffer.from('GET / HTTP/1.1'))).toThrow(/not a WhatsApp Web intro/);
  });

  it('encodes the length big-endian in three bytes', () => {
    expect([...encodeFrame(Buffer.alloc(0x010203)).subarray(0, 3)]).toEqual([1, 2, 3]);
  });
});
