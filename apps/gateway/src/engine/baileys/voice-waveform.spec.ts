import { messageContentFor } from './baileys-outbound';
import { voiceShapeOf, WAVEFORM_BARS } from './voice-waveform';

/** A mono 16-bit WAV: `seconds` of a 440 Hz tone whose amplitude follows `envelope(t)` (0–1). */
function wav(seconds: number, rate: number, envelope: (t: number) => number): Buffer {
  const frames = Math.round(seconds * rate);
  const pcm = Buffer.alloc(frames * 2);
  for (let i = 0; i < frames; i++) pcm.writeInt16LE(Math.round(32000 * envelope(i / rate) * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** One Ogg page holding one packet (the reader does not check the CRC). */
function oggPage(packet: Buffer, granule: bigint, seq: number, headerType = 0): Buffer {
  const lacing: number[] = [];
  let left = packet.length;
  while (left >= 255) {
    lacing.push(255);
    left -= 255;
  }
  lacing.push(left);
  const header = Buffer.alloc(27);
  header.write('OggS', 0, 'latin1');
  header[5] = headerType;
  header.writeBigInt64LE(granule, 6);
  header.writeUInt32LE(0x1234, 14);
  header.writeUInt32LE(seq, 18);
  header[26] = lacing.length;
  return Buffer.concat([header, Buffer.from(lacing), packet]);
}

/** Ogg/Opus as a recorder writes it: OpusHead, OpusTags, then 20 ms SILK packets of the given sizes. */
function oggOpus(packetSizes: number[], preSkip = 312): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head[8] = 1;
  head[9] = 1;
  head.writeUInt16LE(preSkip, 10);
  head.writeUInt32LE(48000, 12);
  const tags = Buffer.concat([Buffer.from('OpusTags', 'latin1'), Buffer.alloc(8)]);
  // TOC config 1 (SILK narrowband, 20 ms), code 0 (one frame)
  const pages = [oggPage(head, 0n, 0, 2), oggPage(tags, 0n, 1)];
  packetSizes.forEach((size, i) => {
    const packet = Buffer.alloc(size, 0x55);
    packet[0] = 1 << 3;
    pages.push(oggPage(packet, BigInt((i + 1) * 960 + preSkip), i + 2, i === packetSizes.length - 1 ? 4 : 0));
  });
  return Buffer.concat(pages);
}

describe('voiceShapeOf (the bars and length WhatsApp shows for a voice note)', () => {
  it('reads a WAV exactly: 64 bars, loud half at 100, quiet half low, and its length', () => {
    const shape = voiceShapeOf(wav(3, 8000, (t) => (t < 1.5 ? 1 : 0.1)))!;
    expect(shape.seconds).toBe(3);
    expect(shape.waveform).toHaveLength(WAVEFORM_BARS);
    const bars = [...shape.waveform];
    expect(Math.max(...bars)).toBe(100);
    expect(Math.min(...bars.slice(0, 31))).toBeGreaterThanOrEqual(95);
    expect(Math.max(...bars.slice(33))).toBeLessThanOrEqual(12);
    expect(Math.min(...bars.slice(33))).toBeGreaterThanOrEqual(8);
  });

  it('draws a rising tone as rising bars', () => {
    const bars = [...voiceShapeOf(wav(2, 8000, (t) => t / 2))!.waveform];
    for (let i = 1; i < bars.length; i++) expect(bars[i]).toBeGreaterThanOrEqual(bars[i - 1]);
    expect(bars[0]).toBeLessThan(5);
    expect(bars[63]).toBe(100);
  });

  it('reads Ogg/Opus: its length from the granule position, the bars from the packet sizes (sound vs silence)', () => {
    // 1 s of speech-sized packets, 1 s of silence-sized ones, 0.5 s of speech again
    const sizes = [...Array(50).fill(60), ...Array(50).fill(3), ...Array(25).fill(60)];
    const shape = voiceShapeOf(oggOpus(sizes))!;
    expect(shape.seconds).toBe(3); // 2.5 s rounds to 3
    const bars = [...shape.waveform];
    expect(bars).toHaveLength(WAVEFORM_BARS);
    expect(bars.slice(0, 25).every((b) => b === 100)).toBe(true);
    expect(bars.slice(27, 50).every((b) => b === 5)).toBe(true);
    expect(bars.slice(53).every((b) => b === 100)).toBe(true);
  });

  it('answers null for what it cannot read (no shape rather than a wrong one)', () => {
    expect(voiceShapeOf(Buffer.from('not audio at all'))).toBeNull();
    expect(voiceShapeOf(wav(2, 8000, () => 1).subarray(0, 60))).toBeNull();
    expect(voiceShapeOf(Buffer.from('OggS'))).toBeNull();
  });

  it('is what the engine sends with a voice note; an audio file (Ogg included) goes without', () => {
    const audio = wav(2, 8000, () => 1);
    const media = { data: audio, mimetype: 'audio/wav', filename: null };
    expect(messageContentFor({ type: 'voice', media }, [])).toMatchObject({ ptt: true, seconds: 2, waveform: expect.any(Uint8Array) });
    const ogg = oggOpus(Array(100).fill(40));
    expect(messageContentFor({ type: 'voice', media: { ...media, data: ogg, mimetype: 'audio/ogg' } }, [])).toMatchObject({ ptt: true, seconds: 2 });
    expect(messageContentFor({ type: 'audio', media: { ...media, data: ogg, mimetype: 'audio/ogg' } }, [])).toMatchObject({ ptt: false });
    expect(messageContentFor({ type: 'audio', media }, [])).not.toHaveProperty('waveform');
  });
});
