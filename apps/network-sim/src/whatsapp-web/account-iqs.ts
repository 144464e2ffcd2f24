/**
 * The account's own IQs (CONTRACT 12 over the WhatsApp Web door), answered as WhatsApp answers Baileys rc14: number
 * lookups (usync `contact`), about texts (usync `status`), profile pictures (`w:profile:picture`), the block list
 * (`blocklist`) and the about text the device sets (`status`). Each reads or changes the network's state through the
 * same handlers the device protocol uses (actions/contacts.ts, via SimNetwork's `action` op), so `GET /sim/sessions/{id}/account`
 * shows the same whichever door was used. The push name is app state (`pushNameSetting`): app-state.ts.
 */
import { act, child, IqAnswer, IqContext, IqError } from './iq';
import { type BinaryNode, nowSeconds } from './wa-kit';

const digitsOf = (jid: string) => jid.split('@')[0].split(':')[0];

function text(node: BinaryNode | undefined): string | null {
  const content = node?.content;
  if (content instanceof Uint8Array) return Buffer.from(content).toString('utf8');
  return typeof content === 'string' ? content : null;
}

/**
 * A usync `contact` entry: `in` for a number on the network, `out` otherwise (Baileys' onWhatsApp keeps `in` only).
 * `onWhatsApp` names the user by phone (`<user><contact>+digits</contact></user>`), so the answer names its jid.
 */
export function usyncContact(user: BinaryNode, ctx: IqContext): { jid: string; contact: BinaryNode } | null {
  const phone = text(child(user, 'contact'));
  const jid = phone ? `${phone.replace(/^\+/, '')}@s.whatsapp.net` : user.attrs.jid;
  if (!jid) return null;
  let exists = false;
  try {
    const { results } = act(ctx, 'contacts.check', { phoneNumbers: [digitsOf(jid)] });
    exists = results[0]?.exists === true;
  } catch (err) {
    // a malformed number is simply not on WhatsApp; anything else (not logged in) is the IQ's error
    if (!(err instanceof IqError) || err.code !== 400) throw err;
  }
  const out: BinaryNode = { tag: 'contact', attrs: { type: exists ? 'in' : 'out' } };
  return { jid: jid.endsWith('@s.whatsapp.net') ? `${digitsOf(jid)}@s.whatsapp.net` : jid, contact: phone ? { ...out, content: Buffer.from(phone) } : out };
}

/** A usync `status` entry: the account's about text (none, or hidden from a device it blocked: no content). */
export function usyncStatus(jid: string, ctx: IqContext): BinaryNode {
  let about: string | null = null;
  try {
    about = act(ctx, 'contacts.profile', { jid: jid.replace(/:\d+@/, '@') }).about;
  } catch (err) {
    if (!(err instanceof IqError) || err.code !== 400) throw err;
  }
  return about ? { tag: 'status', attrs: { t: nowSeconds() }, content: Buffer.from(about, 'utf8') } : { tag: 'status', attrs: { t: '0' } };
}

export const ACCOUNT_IQ_ANSWERS: Record<string, IqAnswer> = {
  'blocklist get': (_iq, ctx) => {
    const { jids } = act(ctx, 'contacts.blocklist', {});
    return [{ tag: 'list', attrs: {}, content: jids.map((jid) => ({ tag: 'item', attrs: { jid } })) }];
  },
  // rc14 names the contact by its lid, with its number (`pn_jid`) when blocking
  'blocklist set item': (iq, ctx) => {
    const item = child(iq, 'item')!;
    const action = item.attrs.action;
    if (action !== 'block' && action !== 'unblock') throw new IqError(400, 'bad-request');
    act(ctx, 'contacts.block', { jid: item.attrs.pn_jid ?? item.attrs.jid, block: action === 'block' });
    return undefined;
  },
  // a picture's url, as WhatsApp hands out its CDN's; none (or hidden): 404. A group's (`target=…@g.us`) is groups.ts's:
  // iq-router.ts routes those IQs there, so these three answer for accounts only
  'w:profile:picture get picture': (iq, ctx) => {
    const target = iq.attrs.target;
    if (!target) throw new IqError(501, 'feature-not-implemented');
    const { pictureUrl } = act(ctx, 'contacts.profile', { jid: target });
    if (!pictureUrl) throw new IqError(404, 'item-not-found');
    const id = pictureUrl.slice(pictureUrl.lastIndexOf('/') + 1, pictureUrl.lastIndexOf('/') + 17);
    return [{ tag: 'picture', attrs: { id, type: child(iq, 'picture')?.attrs.type ?? 'image', url: pictureUrl } }];
  },
  // the account's own picture
  'w:profile:picture set picture': (iq, ctx) => {
    const img = child(iq, 'picture')?.content;
    if (!(img instanceof Uint8Array) || img.length === 0) throw new IqError(400, 'bad-request');
    act(ctx, 'profile.picture.set', { base64: Buffer.from(img).toString('base64'), mimetype: 'image/jpeg' });
    return undefined;
  },
  'w:profile:picture set': (_iq, ctx) => {
    act(ctx, 'profile.picture.remove', {});
    return undefined;
  },
  'status set status': (iq, ctx) => {
    act(ctx, 'profile.update', { about: text(child(iq, 'status')) ?? '' });
    return undefined;
  },
};

/** The users of a usync query the account area answers alone: onWhatsApp's lookups by phone number. */
export function usyncByPhone(user: BinaryNode, protocols: string[], ctx: IqContext): BinaryNode | null {
  if (user.attrs.jid || !child(user, 'contact')) return null;
  const found = usyncContact(user, ctx);
  if (!found) return null;
  const content: BinaryNode[] = protocols.includes('contact') ? [found.contact] : [];
  if (protocols.includes('status')) content.push(usyncStatus(found.jid, ctx));
  return { tag: 'user', attrs: { jid: found.jid }, content };
}
