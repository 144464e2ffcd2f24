import type { proto } from '@whiskeysockets/baileys';
import type { MessageCodec } from '../../apps/gateway/src/engine/baileys/baileys-runtime';

/**
 * Stands in for proto.Message.encode/decode in unit specs (protobuf lives in ESM-only Baileys): the bytes name the
 * encoded content, so a spec can check exactly what was encoded and hand it back.
 */
export class FakeMessageCodec implements MessageCodec {
  private readonly stored: proto.IMessage[] = [];

  readonly encodeMessage = (content: proto.IMessage): Uint8Array => {
    this.stored.push(content);
    return Buffer.from(`proto#${this.stored.length - 1}`);
  };

  readonly decodeMessage = (bytes: Uint8Array): proto.IMessage => {
    const match = /^proto#(\d+)$/.exec(Buffer.from(bytes).toString());
    if (!match) throw new Error(`not bytes of this codec: ${Buffer.from(bytes).toString()}`);
    return this.stored[Number(match[1])];
  };
}
