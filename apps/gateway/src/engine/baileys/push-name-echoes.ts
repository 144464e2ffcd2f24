import type { Contact, WAMessage } from '@whiskeysockets/baileys';

/** How many senders' push names a connection remembers (the oldest go first). */
const PUSH_NAMES_KEPT = 5000;

/**
 * Baileys follows every inbound message that carries a push name with `contacts.update [{ id, notify }]` for its
 * sender (Socket/chats.js upsertMessage), after the message itself. The message already tells the gateway that name,
 * so the echo is one more spool entry and one more contact write per message, and it made the gateway forget the
 * name it had just stored. This drops an update that says nothing but a push name the connection has already seen
 * for that sender; any other contact news passes.
 */
export class PushNameEchoes {
  private readonly known = new Map<string, string>();

  constructor(private readonly max = PUSH_NAMES_KEPT) {}

  /** An inbound message: its sender's push name is now known to the gateway. */
  sawMessage(raw: WAMessage): void {
    if (raw.key.fromMe || !raw.pushName) return;
    const sender = raw.key.participant || raw.key.remoteJid;
    if (sender) this.remember(sender, signature(raw.pushName, raw.verifiedBizName));
  }

  /** The updates worth passing on: all but the echoes of push names already known. */
  news(updates: Partial<Contact>[]): Partial<Contact>[] {
    return updates.filter((update) => {
      if (!update.id || !update.notify || !onlyPushName(update)) return true;
      const said = signature(update.notify, update.verifiedName);
      if (this.known.get(userOf(update.id)) === said) return false;
      this.remember(update.id, said);
      return true;
    });
  }

  private remember(jid: string, said: string): void {
    const user = userOf(jid);
    this.known.delete(user);
    this.known.set(user, said);
    if (this.known.size > this.max) this.known.delete(this.known.keys().next().value!);
  }
}

/** What Baileys puts in the echo: the sender's id, the push name, and the business name when it has one. */
function onlyPushName(update: Partial<Contact>): boolean {
  return Object.keys(update).every((field) => field === 'id' || field === 'notify' || field === 'verifiedName');
}

function signature(pushName: string, verifiedName: string | null | undefined): string {
  return `${pushName}\u0000${verifiedName ?? ''}`;
}

/** A JID without its device part (`123:4@s.whatsapp.net` → `123@s.whatsapp.net`), as Baileys names the echo's sender. */
function userOf(jid: string): string {
  return jid.replace(/:\d+@/, '@');
}
