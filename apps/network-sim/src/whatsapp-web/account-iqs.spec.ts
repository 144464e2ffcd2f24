import { createHash } from 'node:crypto';
import { DeviceLink, SimNetwork } from '../sim-network';
import type { CompanionRegistration } from './directory';
import type { SignalContact } from './signal-party';
import { answerIq, child, children, IqContext } from './stanzas';
import type { BinaryNode } from './wa-kit';

const OWN = '15551110000';
const ANA = '15551110001';
const NOBODY = '15559990000';

function pairedContext(): { network: SimNetwork; ctx: IqContext } {
  const network = new SimNetwork({ qrIntervalMs: 60_000 });
  const link: DeviceLink = { send: () => undefined, close: () => undefined, drop: () => undefined };
  network.attach('s1', link, null);
  network.scan('s1', { phoneNumber: OWN });
  const device = { sessionId: 's1', deviceIndex: 1 } as CompanionRegistration;
  const ctx: IqContext = { device, account: { phoneNumber: OWN, lidUser: network.lidOf(OWN).split('@')[0] }, contact: (jid) => ({ jid, lid: network.lidOf(jid.split('@')[0]) }) as SignalContact, network, sessionId: 's1', link };
  return { network, ctx };
}

const iq = (xmlns: string, type: string, content?: BinaryNode[], attrs: Record<string, string> = {}): BinaryNode => ({
  tag: 'iq',
  attrs: { id: 'q1', to: 's.whatsapp.net', xmlns, type, ...attrs },
  ...(content ? { content } : {}),
});

/** A usync query as Baileys' USyncQuery writes it. */
const usync = (protocols: string[], users: BinaryNode[]) =>
  iq('usync', 'get', [
    {
      tag: 'usync',
      attrs: { context: 'interactive', mode: 'query', sid: 'x', last: 'true', index: '0' },
      content: [
        { tag: 'query', attrs: {}, content: protocols.map((tag) => ({ tag, attrs: {} })) },
        { tag: 'list', attrs: {}, content: users },
      ],
    },
  ]);
const users = (answer: BinaryNode) => children(child(child(answer, 'usync'), 'list'));

describe('the account\'s IQs on the WhatsApp Web front door', () => {
  let network: SimNetwork;
  let ctx: IqContext;
  beforeEach(() => {
    ({ network, ctx } = pairedContext());
    network.world.contacts.put(network, { phoneNumber: ANA, name: 'Ana', about: 'At the gym', pictureBase64: Buffer.from('ana-picture').toString('base64') });
  });

  it('onWhatsApp (usync contact by phone): `in` with the jid for a number on the network, `out` for one that is not', () => {
    const answer = answerIq(usync(['contact'], [ANA, NOBODY].map((n) => ({ tag: 'user', attrs: {}, content: [{ tag: 'contact', attrs: {}, content: Buffer.from(`+${n}`) }] }))), ctx);
    expect(answer.attrs.type).toBe('result');
    expect(users(answer).map((u) => [u.attrs.jid, child(u, 'contact')?.attrs.type])).toEqual([
      [`${ANA}@s.whatsapp.net`, 'in'],
      [`${NOBODY}@s.whatsapp.net`, 'out'],
    ]);
  });

  it('about (usync status): the text the contact set; none once it cleared it', () => {
    const status = () => users(answerIq(usync(['status'], [{ tag: 'user', attrs: { jid: `${ANA}@s.whatsapp.net` } }]), ctx)).map((u) => child(u, 'status'));
    expect(Buffer.from(status()[0]!.content as Uint8Array).toString()).toBe('At the gym');
    network.world.contacts.put(network, { phoneNumber: ANA, about: null });
    expect(status()[0]!.content).toBeUndefined();
  });

  it('profile picture url: the simulator\'s picture url, or 404 item-not-found without one', () => {
    const picture = (jid: string) => answerIq(iq('w:profile:picture', 'get', [{ tag: 'picture', attrs: { type: 'image', query: 'url' } }], { target: jid }), ctx);
    const sha = createHash('sha256').update('ana-picture').digest('hex');
    expect(child(picture(`${ANA}@s.whatsapp.net`), 'picture')?.attrs.url).toMatch(new RegExp(`/sim/pictures/${sha}$`));
    const none = picture(`${NOBODY}@s.whatsapp.net`);
    expect([none.attrs.type, child(none, 'error')?.attrs]).toEqual(['error', { code: '404', text: 'item-not-found' }]);
  });

  it('blocks by lid with pn_jid, unblocks by lid, lists the block list: the network\'s /account shows the same', () => {
    const anaLid = network.lidOf(ANA);
    const block = (attrs: Record<string, string>) => answerIq(iq('blocklist', 'set', [{ tag: 'item', attrs }]), ctx);
    expect(block({ action: 'block', jid: anaLid, pn_jid: `${ANA}@s.whatsapp.net` }).attrs.type).toBe('result');
    expect(network.world.contacts.accountView(OWN).blocked).toEqual([`${ANA}@s.whatsapp.net`]);
    const list = answerIq(iq('blocklist', 'get'), ctx);
    expect(children(child(list, 'list')).map((i) => i.attrs.jid)).toEqual([`${ANA}@s.whatsapp.net`]);
    expect(block({ action: 'unblock', jid: anaLid }).attrs.type).toBe('result');
    expect(network.world.contacts.accountView(OWN).blocked).toEqual([]);
    // someone not on the network cannot be blocked
    expect(child(block({ action: 'block', jid: `${NOBODY}@s.whatsapp.net` }), 'error')?.attrs.code).toBe('404');
  });

  it('sets the about text and the own picture, and removes the picture', () => {
    expect(answerIq(iq('status', 'set', [{ tag: 'status', attrs: {}, content: Buffer.from('Busy') }]), ctx).attrs.type).toBe('result');
    const img = Buffer.from('jpeg-bytes');
    expect(answerIq(iq('w:profile:picture', 'set', [{ tag: 'picture', attrs: { type: 'image' }, content: img }]), ctx).attrs.type).toBe('result');
    expect(network.world.contacts.accountView(OWN)).toMatchObject({ about: 'Busy', pictureSha256: createHash('sha256').update(img).digest('hex') });
    expect(answerIq(iq('w:profile:picture', 'set'), ctx).attrs.type).toBe('result');
    expect(network.world.contacts.accountView(OWN).pictureSha256).toBeNull();
  });
});
