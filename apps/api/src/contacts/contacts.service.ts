import { Injectable } from '@nestjs/common';
import {
  type AccountPresence,
  type ChatPresence,
  type ContactCheckView,
  type ContactDetailView,
  type ContactView,
  DomainError,
  normalizeChatJid,
  type ProfileView,
} from '@app/contracts';
import { type ContactRow, ContactsRepository, type Session, toContactView, type Tx } from '@app/database';
import { EventPublisher } from '@app/events';
import { type Page, type PageQueryDto, pageRequest, toPage } from '../common/pagination';
import { MediaFetcher, mediaTooLarge } from '../messages/media-fetcher';
import { SessionActions } from '../sessions/session-actions';
import type { CheckContactsDto, ProfilePictureDto, UpdateProfileDto } from './dto/contact.dto';

/** The largest profile picture taken (WhatsApp scales it to 640×640 anyway). */
export const PROFILE_PICTURE_MAX_BYTES = 5 * 1024 * 1024;
const PICTURE_MIMETYPES = ['image/jpeg', 'image/png', 'image/webp'];

const invalid = (field: string, problem: string) => new DomainError('validation_error', 'request is invalid', { fields: { [field]: [problem] } });

/** A contact's `{jid}` in any form a send's `to` takes, but a group: `<digits>@s.whatsapp.net` or `<digits>@lid`. */
function contactJid(raw: string): string {
  const jid = normalizeChatJid(raw);
  if (!jid || jid.endsWith('@g.us')) throw invalid('jid', 'must be a phone number or a user jid (…@s.whatsapp.net, …@lid)');
  return jid;
}

/** A chat's `{jid}`: a contact or a group, as a send's `to`. */
function chatJid(raw: string): string {
  const jid = normalizeChatJid(raw);
  if (!jid) throw invalid('jid', 'must be a phone number or a jid (…@s.whatsapp.net, …@lid, …@g.us)');
  return jid;
}

const digitsOf = (input: string) => (input.endsWith('@s.whatsapp.net') ? input.slice(0, input.indexOf('@')) : input.replace(/\D/g, ''));

const detail = (row: ContactRow): ContactDetailView => ({ ...toContactView(row), about: row.about, pictureUrl: row.pictureUrl });

/**
 * Contacts, profile and presence of a session (CONTRACT 12): what needs the network goes through SessionActions (404
 * across organizations, 409 unless `working`, 503 without a gateway); what the answers change is stored in `contacts`
 * and, for blocks, announced (`contact.blocked` / `contact.unblocked`) in the same transaction.
 */
@Injectable()
export class ContactsService {
  constructor(
    private readonly actions: SessionActions,
    private readonly contacts: ContactsRepository,
    private readonly events: EventPublisher,
    private readonly fetcher: MediaFetcher,
  ) {}

  async check(organizationId: string, sessionId: string, body: CheckContactsDto): Promise<{ data: ContactCheckView[] }> {
    const session = await this.actions.connected(organizationId, sessionId);
    const numbers = body.numbers.map(digitsOf);
    numbers.forEach((digits, i) => {
      if (digits.length < 5 || digits.length > 20) throw invalid(`numbers[${i}]`, 'must be a phone number of 5 to 20 digits');
    });
    const { results } = await this.actions.performOn(session, 'contacts.check', { phoneNumbers: [...new Set(numbers)] });
    const byNumber = new Map(results.map((r) => [r.phoneNumber, r]));
    const found = results.filter((r) => r.exists && r.jid);
    await this.contacts.upsertMany(session, found.map((r) => ({ jid: r.jid!, phoneNumber: r.phoneNumber, ...(r.lid ? { lid: r.lid } : {}) })));
    return {
      data: body.numbers.map((input, i) => {
        const r = byNumber.get(numbers[i]);
        return { input, exists: Boolean(r?.exists), jid: r?.jid ?? null, lid: r?.lid ?? null };
      }),
    };
  }

  async list(organizationId: string, sessionId: string, query: PageQueryDto): Promise<Page<ContactView>> {
    const session = await this.actions.session(organizationId, sessionId);
    return toPage(await this.contacts.page(session, pageRequest(query)), toContactView);
  }

  /**
   * About and picture come from the network while the session is working (and are stored); otherwise the stored
   * contact answers with what was last seen. 404: neither stored nor on WhatsApp.
   */
  async get(organizationId: string, sessionId: string, rawJid: string): Promise<ContactDetailView> {
    const session = await this.actions.session(organizationId, sessionId);
    const jid = contactJid(rawJid);
    const stored = await this.contacts.find(session, jid);
    if (session.status === 'working') {
      const profile = await this.actions.performOn(session, 'contacts.profile', { jid });
      if (profile.exists) {
        const [row] = await this.contacts.upsertMany(session, [{ jid, about: profile.about, pictureUrl: profile.pictureUrl }]);
        // a session at its bound of contacts does not store a new one: it is answered all the same
        if (row) return detail(row);
        return { ...unstored(jid, null, false), about: profile.about, pictureUrl: profile.pictureUrl };
      }
      if (stored) return { ...detail(stored), about: null, pictureUrl: null };
    } else if (stored) {
      return detail(stored);
    }
    throw new DomainError('not_found', 'no such contact: not stored for this session and not on WhatsApp', { jid });
  }

  async setBlocked(organizationId: string, sessionId: string, rawJid: string, block: boolean): Promise<ContactView> {
    const session = await this.actions.connected(organizationId, sessionId);
    const jid = contactJid(rawJid);
    const answer = await this.actions.performOn(session, 'contacts.block', { jid, block });
    const facts = { jid: answer.jid, blocked: answer.blocked, ...(answer.lid ? { lid: answer.lid } : {}) };
    return this.events.transact(async (tx, publish) => {
      const [stored] = await this.contacts.markBlocked(session, [facts], tx as Tx);
      const contact: ContactView = stored
        ? toContactView(stored.row)
        : unstored(answer.jid, answer.lid, answer.blocked);
      // a block of a contact already blocked is no news (nor is the same change coming back from the network)
      if (!stored || stored.changed) {
        publish({ event: answer.blocked ? 'contact.blocked' : 'contact.unblocked', organizationId, sessionId: session.id, payload: { contact } });
      }
      return contact;
    });
  }

  async chatPresence(organizationId: string, sessionId: string, rawJid: string, presence: ChatPresence): Promise<void> {
    const session = await this.actions.connected(organizationId, sessionId);
    await this.actions.performOn(session, 'presence.chat', { chatJid: chatJid(rawJid), presence });
  }

  async accountPresence(organizationId: string, sessionId: string, presence: AccountPresence): Promise<void> {
    await this.actions.perform(organizationId, sessionId, 'presence.account', { presence });
  }

  async subscribePresence(organizationId: string, sessionId: string, rawJid: string): Promise<void> {
    const session = await this.actions.connected(organizationId, sessionId);
    await this.actions.performOn(session, 'presence.subscribe', { jid: contactJid(rawJid) });
  }

  profile(organizationId: string, sessionId: string): Promise<ProfileView> {
    return this.actions.perform(organizationId, sessionId, 'profile.get', {});
  }

  async updateProfile(organizationId: string, sessionId: string, body: UpdateProfileDto): Promise<ProfileView> {
    const session = await this.actions.connected(organizationId, sessionId);
    if (body.name === undefined && body.about === undefined) throw invalid('body', 'name or about is required');
    return this.actions.performOn(session, 'profile.update', {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.about !== undefined ? { about: body.about } : {}),
    });
  }

  async setPicture(organizationId: string, sessionId: string, body: ProfilePictureDto): Promise<ProfileView> {
    const session: Session = await this.actions.connected(organizationId, sessionId);
    const { media } = body;
    const mimetype = media.mimetype.split(';')[0].trim().toLowerCase();
    if (!PICTURE_MIMETYPES.includes(mimetype)) throw invalid('media.mimetype', `must be one of ${PICTURE_MIMETYPES.join(', ')}`);
    const field = media.url !== undefined ? 'media.url' : 'media.base64';
    const bytes = media.url !== undefined ? await this.fetcher.fetch(media.url) : Buffer.from(media.base64!, 'base64');
    if (bytes.length > PROFILE_PICTURE_MAX_BYTES) throw mediaTooLarge(field, PROFILE_PICTURE_MAX_BYTES);
    return this.actions.performOn(session, 'profile.picture.set', { base64: bytes.toString('base64'), mimetype });
  }

  removePicture(organizationId: string, sessionId: string): Promise<ProfileView> {
    return this.actions.perform(organizationId, sessionId, 'profile.picture.remove', {});
  }
}

/** A contact the session does not store (it holds its bound of contacts), as the network answered it. */
function unstored(jid: string, lid: string | null, blocked: boolean): ContactView {
  const phoneNumber = /^(\d+)@s\.whatsapp\.net$/.exec(jid)?.[1] ?? null;
  return { jid, lid, phoneNumber, name: null, pushName: null, verifiedName: null, isBusiness: false, blocked };
}
