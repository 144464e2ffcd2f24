/**
 * WhatsApp's media encryption, as a phone runs it on both ends: a random 32-byte media key expanded with HKDF (Baileys'
 * getMediaKeys: `WhatsApp <Image|Video|Audio|Document|History> Keys`, 112 bytes: iv, cipher key, mac key), the file
 * AES-256-CBC encrypted, followed by the first 10 bytes of HMAC-SHA256(iv ‖ ciphertext). The message carries the key
 * and the SHA-256 of the plain and of the encrypted file; whoever downloads checks both.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Baileys } from './wa-kit';

/** Baileys' media types as HKDF names them (MEDIA_HKDF_KEY_MAPPING): the ones the front door carries. */
export type WaMediaType = 'image' | 'video' | 'audio' | 'document' | 'sticker' | 'md-msg-hist';

const MAC_LENGTH = 10;

export interface EncryptedMedia {
  mediaKey: Buffer;
  /** ciphertext ‖ mac: what is uploaded */
  file: Buffer;
  fileSha256: Buffer;
  fileEncSha256: Buffer;
  fileLength: number;
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();

async function keysOf(baileys: Baileys, mediaKey: Uint8Array, mediaType: WaMediaType): Promise<{ iv: Buffer; cipherKey: Buffer; macKey: Buffer }> {
  const { iv, cipherKey, macKey } = await baileys.getMediaKeys(Buffer.from(mediaKey), mediaType);
  if (!iv || !cipherKey || !macKey) throw new Error('no media keys');
  return { iv: Buffer.from(iv), cipherKey: Buffer.from(cipherKey), macKey: Buffer.from(macKey) };
}

export async function encryptMedia(baileys: Baileys, plain: Buffer, mediaType: WaMediaType): Promise<EncryptedMedia> {
  const mediaKey = randomBytes(32);
  const { iv, cipherKey, macKey } = await keysOf(baileys, mediaKey, mediaType);
  const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  const mac = createHmac('sha256', macKey).update(iv).update(ciphertext).digest().subarray(0, MAC_LENGTH);
  const file = Buffer.concat([ciphertext, mac]);
  return { mediaKey, file, fileSha256: sha256(plain), fileEncSha256: sha256(file), fileLength: plain.length };
}

export class MediaIntegrityError extends Error {}

/**
 * The downloader's side: checks the encrypted file's hash and mac, decrypts, and checks the plain hash. Throws a
 * MediaIntegrityError when any of them does not match (a wrong key, a tampered or truncated file).
 */
export async function decryptMedia(
  baileys: Baileys,
  file: Buffer,
  media: { mediaKey: Uint8Array; mediaType: WaMediaType; fileSha256?: Uint8Array | null; fileEncSha256?: Uint8Array | null },
): Promise<Buffer> {
  if (file.length < MAC_LENGTH + 16) throw new MediaIntegrityError('the media file is too short');
  if (media.fileEncSha256?.length && !sha256(file).equals(Buffer.from(media.fileEncSha256))) throw new MediaIntegrityError('fileEncSha256 does not match the file');
  const { iv, cipherKey, macKey } = await keysOf(baileys, media.mediaKey, media.mediaType);
  const ciphertext = file.subarray(0, file.length - MAC_LENGTH);
  const mac = createHmac('sha256', macKey).update(iv).update(ciphertext).digest().subarray(0, MAC_LENGTH);
  if (!timingSafeEqual(mac, file.subarray(file.length - MAC_LENGTH))) throw new MediaIntegrityError('the media mac does not match (wrong key or tampered file)');
  const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
  const plain = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  if (media.fileSha256?.length && !sha256(plain).equals(Buffer.from(media.fileSha256))) throw new MediaIntegrityError('fileSha256 does not match the decrypted bytes');
  return plain;
}
