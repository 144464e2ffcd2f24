/**
 * JSON with binary values, compatible with Baileys' `BufferJSON` encoding (`{type:'Buffer', data:<base64>}`),
 * written here because jest loads this file and cannot load the ESM-only Baileys module.
 * Both engines store their auth state through it (`../auth-state/`), and the Baileys inbound spool its events
 * (`baileys/spooled-event.ts`), so it must not know any engine's types.
 */

interface EncodedBuffer {
  type: 'Buffer';
  data: string;
}

function isNodeBufferJson(value: unknown): value is { type: 'Buffer'; data: number[] } {
  return (
    typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'Buffer' &&
    Array.isArray((value as { data?: unknown }).data)
  );
}

function isEncodedBuffer(value: unknown): value is EncodedBuffer {
  return (
    typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'Buffer' &&
    typeof (value as { data?: unknown }).data === 'string'
  );
}

/** JSON.stringify calls Buffer#toJSON before the replacer sees the value, so both shapes arrive here. */
function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return { type: 'Buffer', data: Buffer.from(value).toString('base64') };
  if (isNodeBufferJson(value)) return { type: 'Buffer', data: Buffer.from(value.data).toString('base64') };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (isEncodedBuffer(value)) return Buffer.from(value.data, 'base64');
  if (isNodeBufferJson(value)) return Buffer.from(value.data);
  return value;
}

export function encodeBinaryJson(value: unknown): string {
  return JSON.stringify(value, replacer);
}

export function decodeBinaryJson<T = unknown>(json: string): T {
  return JSON.parse(json, reviver) as T;
}
