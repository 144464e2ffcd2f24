import type { Logger } from 'pino';
import type { AuthenticationCreds, proto, WAMessage, WAMessageKey, WASocket } from '@whiskeysockets/baileys';
import type { EngineEvent, EngineLookups } from '../engine.interface';
import { chatOf, pollVoteFrom, toLid, toUserJid } from './baileys-mapping';
import type { BaileysRuntime } from './baileys-runtime';
import { storedContent } from './baileys-identity';
import { describe } from './connection-errors';

/**
 * The poll votes of one Baileys connection, decrypted against the poll we stored and reported as `poll-vote` events
 * (docs/baileys-engine.md, "Poll votes"). A part of BaileysConnection.
 */
export interface PollVotesDeps {
  sock: WASocket;
  creds: AuthenticationCreds;
  runtime: BaileysRuntime;
  lookups: EngineLookups | null;
  logger: Logger;
  ownJid: () => string | null;
  /** whether the connection has closed: nothing is reported after a close */
  closed: () => boolean;
  /** resolves once the event is durable (at once for none) */
  emit: (event: EngineEvent | null) => Promise<void>;
}

export class PollVotes {
  constructor(private readonly deps: PollVotesDeps) {}

  /** A vote Baileys (or a store in front of it) already decrypted, from messages.update. */
  decrypted(pollKey: WAMessageKey, voteKey: WAMessageKey, vote: proto.Message.IPollVoteMessage): void {
    void this.track(this.report(pollKey, chatOf(pollKey), voteKey, () => vote));
  }

  /**
   * Baileys rc14 no longer decrypts votes itself: the vote arrives as a pollUpdateMessage, and its key derives from the
   * poll's messageSecret (in the stored creation message) and the creator's and voter's JIDs exactly as the voter's
   * phone wrote them, which may be phone numbers or LIDs. Each known form is tried; AES-GCM refuses the wrong ones.
   */
  encrypted(msg: WAMessage, update: proto.Message.IPollUpdateMessage): Promise<void> {
    return this.track(this.decrypt(msg, update));
  }

  private async decrypt(msg: WAMessage, update: proto.Message.IPollUpdateMessage): Promise<void> {
    const pollKey = update.pollCreationMessageKey as WAMessageKey | null | undefined;
    if (!pollKey?.id || !update.vote) return;
    await this.report(pollKey, chatOf(msg.key), msg.key, (creation) => {
      const secret = creation.messageContextInfo?.messageSecret;
      if (!secret?.length) throw new Error('the stored poll has no messageSecret');
      for (const pollCreatorJid of this.jidForms(pollKey)) {
        for (const voterJid of this.jidForms(msg.key)) {
          try {
            return this.deps.runtime.decryptPollVote(update.vote!, { pollCreatorJid, pollMsgId: pollKey.id!, pollEncKey: secret, voterJid });
          } catch {
            // not this pair of JID forms
          }
        }
      }
      throw new Error('no JID form of creator and voter decrypts the vote');
    });
  }

  private async report(
    pollKey: WAMessageKey,
    chatJid: string,
    voteKey: WAMessageKey,
    voteOf: (creation: proto.IMessage) => proto.Message.IPollVoteMessage,
  ): Promise<void> {
    const { lookups, runtime } = this.deps;
    const raw = lookups ? await storedContent(lookups, { ...pollKey, remoteJid: pollKey.remoteJid ?? chatJid }) : null;
    if (!raw) {
      this.deps.logger.warn({ poll: pollKey.id }, 'poll vote for a poll we have not stored; it cannot be decrypted');
      return;
    }
    const creation = runtime.decodeMessage(raw);
    const vote = voteOf(creation);
    // the lookup is async: the connection may have closed meanwhile, and nothing follows a close
    if (this.deps.closed()) return;
    await this.deps.emit(pollVoteFrom({ creation, pollKey, chatJid, voteKey, vote }, runtime.getAggregateVotesInPollMessage, this.deps.ownJid()));
  }

  /** The forms a key's author may have been named by when a poll key was derived: number and LID, device-free. */
  private jidForms(key: WAMessageKey): string[] {
    const user = this.deps.sock.user;
    const me = this.deps.creds.me;
    const candidates = key.fromMe
      ? [this.deps.ownJid(), toLid(user?.lid) ?? toLid(me?.lid) ?? toLid(user?.id)]
      : key.participant
        ? [key.participant, key.participantAlt]
        : [key.remoteJid, key.remoteJidAlt];
    const forms = candidates.map((jid) => toUserJid(jid) ?? toLid(jid) ?? jid).filter((jid): jid is string => Boolean(jid));
    return [...new Set(forms)];
  }

  /**
   * Started from Baileys' synchronous emitter: failures are logged, never left unhandled. Resolves once the vote is
   * reported and durable, or given up (the vote's receipt waits for it: a crash meanwhile leaves it with WhatsApp).
   */
  private track(work: Promise<void>): Promise<void> {
    return work.catch((err) => this.deps.logger.warn({ err: describe(err), what: 'poll vote' }, 'handling a baileys event failed'));
  }
}
