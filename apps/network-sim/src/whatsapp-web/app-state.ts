/** App state sync (w:sync:app:state): the patches Baileys sends for chat modifications and labels. */
import type { IqAnswer } from './stanzas';

export const APP_STATE_IQ_ANSWERS: Record<string, IqAnswer> = {};
