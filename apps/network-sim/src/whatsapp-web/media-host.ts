/** The media host: media_conn and the loopback HTTPS upload/download host Baileys reaches for media. */
import type { IqAnswer } from './stanzas';

export const MEDIA_IQ_ANSWERS: Record<string, IqAnswer> = {};
