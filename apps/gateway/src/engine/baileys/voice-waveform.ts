/**
 * The shape WhatsApp draws for a voice note: 64 bars of 0–100 and the length in seconds. Baileys computes the bars
 * only with the optional `audio-decode` package (a tree of WASM decoders we do not ship) and otherwise sends none, so
 * the phone draws a flat line. Read here without a decoder:
 * - WAV (PCM 8/16/24/32-bit, float 32): the mean absolute amplitude of channel 0 per 64th of the file, exact;
 * - Ogg/Opus (what WhatsApp records): the length from the last page's granule position (48 kHz, less the pre-skip),
 *   exact; the bars from the size of each Opus packet per 64th of the time, an estimate: Opus spends bytes where
 *   there is sound (speech packets are tens of bytes, silence a few), so loud and quiet parts show as WhatsApp's do.
 * Anything else answers null (Baileys then sends the note as before).
 */

export const WAVEFORM_BARS = 64;

export interface VoiceShape {
  /** whole seconds, at least 1 */
  seconds: number;
  /** WAVEFORM_BARS values, 0–100, the loudest 100 */
  waveform: Uint8Array;
}

export function voiceShapeOf(audio: Uint8Array): VoiceShape | null {
  const data = Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength);
  try {
    if (data.length >= 12 && data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WAVE') return wavShape(data);
    if (data.length >= 4 && data.toString('latin1', 0, 4) === 'OggS') return opusShape(data);
  } catch {
    // a truncated or odd file: no shape rather than a wrong one
  }
  return null;
}

/** Averages `level` over WAVEFORM_BARS equal parts of [0, length) and scales the loudest part to 100. */
function bars(length: number, level: (from: number, to: number) => number): Uint8Array {
  const means = Array.from({ length: WAVEFORM_BARS }, (_, i) => level(Math.floor((i * length) / WAVEFORM_BARS), Math.floor(((i + 1) * length) / WAVEFORM_BARS)));
  const max = Math.max(...means);
  return Uint8Array.from(means.map((m) => (max > 0 ? Math.round((100 * m) / max) : 0)));
}

function roundSeconds(seconds: number): number {
  return Math.max(1, Math.round(seconds));
}

function wavShape(data: Buffer): VoiceShape | null {
  let offset = 12;
  let format: { code: number; channels: number; rate: number; bits: number } | null = null;
  while (offset + 8 <= data.length) {
    const id = data.toString('latin1', offset, offset + 4);
    const size = data.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      format = { code: data.readUInt16LE(body), channels: data.readUInt16LE(body + 2), rate: data.readUInt32LE(body + 4), bits: data.readUInt16LE(body + 14) };
    } else if (id === 'data' && format) {
      const { code, channels, rate, bits } = format;
      const bytes = bits / 8;
      // 1: integer PCM, 3: IEEE float; 0xfffe (extensible) is read as its bit depth says
      if (![1, 3, 0xfffe].includes(code) || ![1, 2, 3, 4].includes(bytes) || channels < 1 || rate < 1) return null;
      const end = Math.min(data.length, body + size);
      const frame = bytes * channels;
      const frames = Math.floor((end - body) / frame);
      if (frames < WAVEFORM_BARS) return null;
      const sample = (i: number): number => {
        const at = body + i * frame;
        if (code === 3 && bytes === 4) return data.readFloatLE(at);
        if (bytes === 1) return (data[at] - 128) / 128;
        if (bytes === 2) return data.readInt16LE(at) / 32768;
        if (bytes === 3) return data.readIntLE(at, 3) / 8388608;
        return data.readInt32LE(at) / 2147483648;
      };
      const waveform = bars(frames, (from, to) => {
        let sum = 0;
        for (let i = from; i < to; i++) sum += Math.abs(sample(i));
        return to > from ? sum / (to - from) : 0;
      });
      return { seconds: roundSeconds(frames / rate), waveform };
    }
    offset = body + size + (size % 2);
  }
  return null;
}

/** Opus frame length (ms × 10) by TOC config (RFC 6716 §3.1): SILK 10/20/40/60, hybrid 10/20, CELT 2.5/5/10/20. */
function opusFrameTenthsMs(config: number): number {
  if (config < 12) return [100, 200, 400, 600][config % 4];
  if (config < 16) return [100, 200][config % 2];
  return [25, 50, 100, 200][config % 4];
}

/** How long an Opus packet plays (ms × 10): its frame length times its frame count (§3.2). */
function opusPacketTenthsMs(packet: Buffer): number {
  if (packet.length === 0) return 0;
  const toc = packet[0];
  const code = toc & 0x03;
  const frames = code === 0 ? 1 : code === 3 ? (packet[1] ?? 0) & 0x3f : 2;
  return opusFrameTenthsMs(toc >> 3) * frames;
}

function opusShape(data: Buffer): VoiceShape | null {
  const packets: Buffer[] = [];
  let pending: Buffer[] = [];
  let lastGranule = 0n;
  let offset = 0;
  while (offset + 27 <= data.length && data.toString('latin1', offset, offset + 4) === 'OggS') {
    const granule = data.readBigInt64LE(offset + 6);
    const segments = data[offset + 26];
    const table = data.subarray(offset + 27, offset + 27 + segments);
    let at = offset + 27 + segments;
    for (const lacing of table) {
      pending.push(data.subarray(at, at + lacing));
      at += lacing;
      // a lacing value below 255 ends the packet
      if (lacing < 255) {
        packets.push(Buffer.concat(pending));
        pending = [];
      }
    }
    if (granule > 0n) lastGranule = granule;
    offset = at;
  }
  const head = packets[0];
  if (!head || head.toString('latin1', 0, 8) !== 'OpusHead') return null;
  const preSkip = head.readUInt16LE(10);
  // packets[1] is OpusTags; the rest is audio
  const audio = packets.slice(2).filter((p) => p.length > 0);
  if (audio.length === 0) return null;
  const starts: number[] = [];
  let total = 0;
  for (const p of audio) {
    starts.push(total);
    total += opusPacketTenthsMs(p);
  }
  if (total === 0) return null;
  const waveform = bars(total, (from, to) => {
    let bytes = 0;
    let n = 0;
    audio.forEach((p, i) => {
      const mid = starts[i] + opusPacketTenthsMs(p) / 2;
      if (mid >= from && mid < to) {
        bytes += p.length;
        n += 1;
      }
    });
    return n ? bytes / n : 0;
  });
  const seconds = lastGranule > 0n ? Number(lastGranule - BigInt(preSkip)) / 48000 : total / 10000;
  return { seconds: roundSeconds(seconds), waveform };
}
