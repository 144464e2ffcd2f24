import { useEffect, useRef, useState } from 'preact/hooks';
import type { MessageType } from '@app/contracts';
import type { JSX } from 'preact';
import { api, type ChatView, type MessageView } from '../api';
import { live } from '../live';
import { go } from '../router';
import { ErrorLine, type Loaded, message, plural, useAction, useLoad, When } from '../ui';
import { type AccountLabels, LabelChip, LabelsControl, useAccountLabels } from './labels';

/**
 * A session's inbox (CONTRACT 12): its chats on the left, most recent first, with the last message, the unread count
 * and pinned/archived marks; the open chat's thread on the right, every message type shown as a person expects; a
 * composer for text, files, voice notes, polls and replies that shows "typing…" to the chat while composing; the
 * contact's details (picture, about, block); and on a WhatsApp Business account the chats' labels, shown as chips and
 * changed from the thread's header (labels.tsx). Everything stays current from the live socket.
 */
export function InboxScreen({ sessionId, chatJid }: { sessionId: string; chatJid: string | null }) {
  const chats = useLoad(() => api.chats(sessionId).then((p) => p.data), [sessionId]);
  const labels = useAccountLabels(sessionId);
  useEffect(
    () =>
      live.subscribe((e) => {
        if (e.sessionId !== sessionId) return;
        if (e.event.startsWith('message.') || e.event === 'chat.update' || e.event === 'history.synced' || e.event === 'label.update') chats.reload();
        // a label created, renamed or deleted (on the phone, say) changes the names and colors shown
        if (e.event === 'label.update' && (e.payload as { action?: string }).action !== 'assigned' && (e.payload as { action?: string }).action !== 'unassigned') labels.reload();
      }),
    [sessionId],
  );
  // the account's answer to a label change shows at once; the stored chat follows with its label.update
  const labelsChanged = (jid: string, ids: string[]) => chats.setData((chats.data ?? []).map((c) => (c.jid === jid ? { ...c, labels: ids } : c)));
  const open = (jid: string) => go(`sessions/${encodeURIComponent(sessionId)}/inbox/${encodeURIComponent(jid)}`);
  const current = chats.data?.find((c) => c.jid === chatJid) ?? null;
  return (
    <>
      <p>
        <a href={`#/sessions/${sessionId}`}>← Session</a>
      </p>
      <div class={`inbox ${chatJid ? 'has-thread' : ''}`} data-testid="inbox">
        <ChatList chats={chats} current={chatJid} labels={labels.data} open={open} />
        <section class="thread-pane">
          {chatJid ? (
            <Thread
              key={chatJid}
              sessionId={sessionId}
              chatJid={chatJid}
              chat={current}
              onRead={chats.reload}
              labels={labels.data}
              labelsError={labels.error}
              onLabels={(ids) => labelsChanged(chatJid, ids)}
            />
          ) : (
            <p class="muted">Pick a chat on the left.</p>
          )}
        </section>
      </div>
    </>
  );
}

/** The session's chats, most recent first: name, pinned and archived marks, last message, labels, unread count. */
function ChatList({ chats, current, labels, open }: { chats: Loaded<ChatView[]>; current: string | null; labels: AccountLabels | null; open: (jid: string) => void }) {
  return (
    <aside class="chat-list" aria-label="Chats">
      <ErrorLine error={chats.error} />
      <ul>
        {(chats.data ?? []).map((c) => (
          <li key={c.jid}>
            <button type="button" class={`chat ${c.jid === current ? 'current' : ''}`} data-chat-jid={c.jid} onClick={() => open(c.jid)}>
              <span class="chat-name">
                {c.pinned && <span title="pinned" aria-label="pinned">📌 </span>}
                {c.name || displayJid(c.jid)}
                {c.archived && <span class="badge">archived</span>}
              </span>
              <span class="chat-preview muted">{c.lastMessage ? preview(c.lastMessage) : 'no messages'}</span>
              {c.labels.length > 0 && (
                <span class="chat-labels" data-chat-labels>
                  {c.labels.map((id) => (
                    <LabelChip key={id} id={id} labels={labels?.list ?? []} />
                  ))}
                </span>
              )}
              {c.unreadCount > 0 && (
                <span class="unread" data-unread={c.unreadCount} title={plural(c.unreadCount, 'unread message')}>
                  {c.unreadCount}
                </span>
              )}
            </button>
          </li>
        ))}
      </ul>
      {chats.data && !chats.data.length && <p class="muted">No chats yet: they appear with the first message sent or received.</p>}
    </aside>
  );
}

function Thread({ sessionId, chatJid, chat, onRead, labels, labelsError, onLabels }: {
  sessionId: string;
  chatJid: string;
  chat: ChatView | null;
  onRead: () => void;
  labels: AccountLabels | null;
  labelsError: string | null;
  onLabels: (labelIds: string[]) => void;
}) {
  const thread = useLoad(() => api.chatMessages(sessionId, chatJid).then((p) => p.data.slice().reverse()), [sessionId, chatJid]);
  const [typing, setTyping] = useState<string | null>(null);
  const [replyTo, setReplyTo] = useState<MessageView | null>(null);
  const [showContact, setShowContact] = useState(false);
  const [showLabels, setShowLabels] = useState(false);
  const bottom = useRef<HTMLDivElement>(null);
  const isGroup = chatJid.endsWith('@g.us');

  useEffect(
    () =>
      live.subscribe((e) => {
        if (e.sessionId !== sessionId) return;
        const p = e.payload as { chatJid?: string; message?: { chatJid?: string }; jid?: string; presence?: string };
        if (e.event === 'presence.update' && p.chatJid === chatJid) {
          setTyping(p.presence === 'composing' || p.presence === 'recording' ? (p.presence === 'recording' ? 'recording…' : 'typing…') : null);
        }
        if ((e.event.startsWith('message.') || e.event === 'poll.vote') && (p.chatJid ?? p.message?.chatJid) === chatJid) thread.reload();
      }),
    [sessionId, chatJid],
  );
  // opening a chat reads it: read receipts go to the contact, the unread count drops
  useEffect(() => {
    if (chat && chat.unreadCount > 0) api.readChat(sessionId, chatJid).then(onRead, () => undefined);
  }, [chat?.unreadCount]);
  useEffect(() => bottom.current?.scrollIntoView({ block: 'end' }), [thread.data?.length]);

  const byId = new Map((thread.data ?? []).map((m) => [m.id, m]));
  return (
    <div class="thread" data-thread={chatJid}>
      <ThreadHead sessionId={sessionId} chatJid={chatJid} chat={chat} typing={typing} showLabels={showLabels} setShowLabels={setShowLabels} showContact={showContact} setShowContact={setShowContact} />
      {showLabels && (
        <>
          <ErrorLine error={labelsError} />
          <LabelsControl sessionId={sessionId} chatJid={chatJid} carried={chat?.labels ?? []} labels={labels} onChanged={onLabels} />
        </>
      )}
      {showContact && !isGroup && <ContactCard sessionId={sessionId} jid={chatJid} />}
      <ErrorLine error={thread.error} />
      <ol class="bubbles">
        {(thread.data ?? []).map((m) => (
          <Bubble key={m.id} message={m} quoted={m.quotedMessageId ? (byId.get(m.quotedMessageId) ?? null) : null} isGroup={isGroup} onReply={() => setReplyTo(m)} />
        ))}
      </ol>
      {thread.data && !thread.data.length && <p class="muted">No messages in this chat yet.</p>}
      <div ref={bottom} />
      <Composer sessionId={sessionId} chatJid={chatJid} replyTo={replyTo} onReplyDone={() => setReplyTo(null)} onSent={thread.reload} />
    </div>
  );
}

type Toggle = (update: (shown: boolean) => boolean) => void;

/** The open chat's name and JID, "typing…" while the contact types, and the Labels and Contact toggles. */
function ThreadHead({ sessionId, chatJid, chat, typing, showLabels, setShowLabels, showContact, setShowContact }: {
  sessionId: string;
  chatJid: string;
  chat: ChatView | null;
  typing: string | null;
  showLabels: boolean;
  setShowLabels: Toggle;
  showContact: boolean;
  setShowContact: Toggle;
}) {
  const isGroup = chatJid.endsWith('@g.us');
  return (
    <header class="thread-head">
      <button type="button" class="back" onClick={() => go(`sessions/${encodeURIComponent(sessionId)}/inbox`)} aria-label="Back to chats">
        ←
      </button>
      <div>
        <strong>{chat?.name || displayJid(chatJid)}</strong>
        <div class="muted mono">{chatJid}</div>
        {typing && <div class="typing" data-typing>{typing}</div>}
      </div>
      <span class="spacer" />
      <button type="button" data-labels-toggle onClick={() => setShowLabels((v) => !v)} aria-expanded={showLabels}>
        Labels
      </button>
      {!isGroup && (
        <button type="button" onClick={() => setShowContact((v) => !v)} aria-expanded={showContact}>
          Contact
        </button>
      )}
    </header>
  );
}

function Bubble({ message: m, quoted, isGroup, onReply }: { message: MessageView; quoted: MessageView | null; isGroup: boolean; onReply: () => void }) {
  const revoked = Boolean(m.revokedAt);
  return (
    <li class={`bubble ${m.direction}`} data-message-id={m.id} data-type={m.type}>
      {isGroup && m.direction === 'in' && m.from && <div class="sender mono">{displayJid(m.from)}</div>}
      {quoted && <blockquote class="quoted">{preview(quoted)}</blockquote>}
      {revoked ? <em class="muted" data-revoked>This message was deleted</em> : <Content message={m} />}
      {m.reactions && m.reactions.length > 0 && (
        <div class="reactions" data-reactions>
          {m.reactions.map((r) => (
            <span title={r.from} key={r.from}>
              {r.emoji}
            </span>
          ))}
        </div>
      )}
      <footer class="meta">
        {m.editedAt && !revoked && <span data-edited>edited · </span>}
        <When at={m.sentAt ?? m.createdAt} />
        {m.direction === 'out' && <span class={`tick tick-${m.status}`}> · {m.status}</span>}
        {!revoked && (
          <button type="button" class="link" onClick={onReply}>
            Reply
          </button>
        )}
      </footer>
    </li>
  );
}

function Content({ message: m }: { message: MessageView }) {
  return CONTENT[m.type as MessageType](m);
}

const image = (m: MessageView) => (
  <MediaView message={m} render={(url) => <img src={url} alt={m.media?.caption ?? m.type} class={m.type === 'sticker' ? 'sticker' : 'inline-image'} />} />
);
const audio = (m: MessageView) => <MediaView message={m} render={(url) => <audio src={url} controls data-voice={m.type === 'voice' ? '' : undefined} />} />;
const text = (m: MessageView) => <span class="text">{m.text}</span>;

/** How the inbox shows each message type, one entry per type (docs/messages.md, "adding a message type"). */
const CONTENT: Record<MessageType, (m: MessageView) => JSX.Element | null> = {
  text,
  unknown: text,
  pollVote: text,
  image,
  sticker: image,
  video: (m) => <MediaView message={m} render={(url) => <video src={url} controls class="inline-image" />} />,
  audio,
  voice: audio,
  document: (m) => <MediaView message={m} render={(url) => <a href={url} download={m.media?.filename ?? 'document'}>{m.media?.filename ?? 'document'}</a>} />,
  location: (m) =>
    m.location ? (
      <span>
        📍 {m.location.name ?? ''} {m.location.latitude}, {m.location.longitude}
      </span>
    ) : null,
  contact: (m) =>
    m.contact ? (
      <span>
        👤 {m.contact.fullName} · +{m.contact.phoneNumber}
      </span>
    ) : null,
  poll: (m) => (m.poll ? <Poll message={m} /> : null),
  reaction: (m) => <span class="muted">reacted {m.text ?? ''}</span>,
};

/** A poll with its options and, per option, who voted for it (the latest vote of each voter counts). */
function Poll({ message: m }: { message: MessageView }) {
  const poll = m.poll!;
  const votes = m.pollVotes ?? [];
  return (
    <div class="poll" data-poll>
      <strong>📊 {poll.name}</strong>
      <ul>
        {poll.options.map((option) => {
          const voters = votes.filter((v) => v.options.includes(option)).map((v) => v.voter);
          return (
            <li key={option} data-option={option} data-votes={voters.length}>
              {option} <span class="muted">· {plural(voters.length, 'vote')}</span>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

/** Media bytes need the bearer token: fetched once and shown through an object URL. Outbound media shows its name. */
function MediaView({ message: m, render }: { message: MessageView; render: (url: string) => preact.JSX.Element }) {
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (m.direction !== 'in' || !m.media) return;
    let objectUrl: string | null = null;
    api.media(m.sessionId, m.id).then(
      (blob) => setUrl((objectUrl = URL.createObjectURL(blob))),
      (err) => setError(message(err)),
    );
    return () => void (objectUrl && URL.revokeObjectURL(objectUrl));
  }, [m.id]);
  return (
    <div class="media-content">
      {url ? render(url) : <span class="muted">{m.media?.filename ?? m.type}{m.direction === 'in' && !error ? ' (loading…)' : ''}</span>}
      {m.media?.caption && <div class="text">{m.media.caption}</div>}
      <ErrorLine error={error} />
    </div>
  );
}

type ComposeMode = 'text' | 'file' | 'voice' | 'poll';

/** "typing…" for the contact while composing: sent at most every 5 s, paused when the text is sent or cleared. */
function useTypingPresence(sessionId: string, chatJid: string) {
  const lastTyping = useRef(0);
  const typed = (value: string) => {
    const now = Date.now();
    if (value && now - lastTyping.current > 5000) {
      lastTyping.current = now;
      api.chatPresence(sessionId, chatJid, 'composing').catch(() => undefined);
    } else if (!value && lastTyping.current) {
      lastTyping.current = 0;
      api.chatPresence(sessionId, chatJid, 'paused').catch(() => undefined);
    }
  };
  const sent = () => {
    if (lastTyping.current) api.chatPresence(sessionId, chatJid, 'paused').catch(() => undefined);
    lastTyping.current = 0;
  };
  return { typed, sent };
}

/** What the composer holds, sent as the message its mode makes. */
async function sendComposed(sessionId: string, chatJid: string, draft: { mode: ComposeMode; text: string; file: File | null; pollOptions: string; quotedMessageId?: string }) {
  const { mode, text, file, pollOptions, quotedMessageId } = draft;
  if (mode === 'text') {
    await api.send(sessionId, { to: chatJid, type: 'text', text, quotedMessageId });
  } else if (mode === 'poll') {
    const options = pollOptions.split('\n').map((o) => o.trim()).filter(Boolean);
    await api.send(sessionId, { to: chatJid, type: 'poll', poll: { name: text, options }, quotedMessageId });
  } else if (file) {
    const media = { base64: await toBase64(file), mimetype: file.type || 'application/octet-stream', filename: file.name };
    const type = mode === 'voice' ? 'voice' : mediaType(media.mimetype);
    await api.send(sessionId, { to: chatJid, type, media, text: mode === 'file' && text ? text : undefined, quotedMessageId });
  }
}

function Composer({ sessionId, chatJid, replyTo, onReplyDone, onSent }: { sessionId: string; chatJid: string; replyTo: MessageView | null; onReplyDone: () => void; onSent: () => void }) {
  const [mode, setMode] = useState<ComposeMode>('text');
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [pollOptions, setPollOptions] = useState('');
  const send = useAction();
  const typing = useTypingPresence(sessionId, chatJid);

  const submit = async () => {
    await sendComposed(sessionId, chatJid, { mode, text, file, pollOptions, quotedMessageId: replyTo?.id });
    typing.sent();
    setText('');
    setFile(null);
    setPollOptions('');
    onReplyDone();
    onSent();
  };

  return (
    <form
      class="composer"
      aria-label="Compose"
      onSubmit={(e) => {
        e.preventDefault();
        send.run(submit);
      }}
    >
      {replyTo && <ReplyingTo message={replyTo} onCancel={onReplyDone} />}
      <ComposeModes mode={mode} setMode={setMode} />
      {(mode === 'file' || mode === 'voice') && (
        <input type="file" name="file" required accept={mode === 'voice' ? 'audio/*' : undefined} onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
      )}
      {mode !== 'voice' && (
        <textarea
          name="text"
          rows={mode === 'poll' ? 1 : 2}
          required={mode !== 'file'}
          maxLength={4096}
          placeholder={mode === 'poll' ? 'Question' : mode === 'file' ? 'Caption (optional)' : 'Message'}
          value={text}
          onInput={(e) => (setText(e.currentTarget.value), typing.typed(e.currentTarget.value))}
        />
      )}
      {mode === 'poll' && (
        <textarea name="options" rows={3} required placeholder="One option per line (2 to 12)" value={pollOptions} onInput={(e) => setPollOptions(e.currentTarget.value)} />
      )}
      <button type="submit" class="primary" disabled={send.busy}>
        Send
      </button>
      <ErrorLine error={send.error} />
    </form>
  );
}

function ReplyingTo({ message: m, onCancel }: { message: MessageView; onCancel: () => void }) {
  return (
    <div class="replying">
      Replying to <q>{preview(m)}</q>{' '}
      <button type="button" class="link" onClick={onCancel}>
        cancel
      </button>
    </div>
  );
}

function ComposeModes({ mode, setMode }: { mode: ComposeMode; setMode: (mode: ComposeMode) => void }) {
  return (
    <div class="tabs compose-modes">
      {(['text', 'file', 'voice', 'poll'] as const).map((m) => (
        <button type="button" key={m} class={mode === m ? 'current' : ''} onClick={() => setMode(m)}>
          {m === 'text' ? 'Text' : m === 'file' ? 'File' : m === 'voice' ? 'Voice note' : 'Poll'}
        </button>
      ))}
    </div>
  );
}

function ContactCard({ sessionId, jid }: { sessionId: string; jid: string }) {
  const contact = useLoad(() => api.contact(sessionId, jid), [sessionId, jid]);
  const block = useAction();
  const c = contact.data;
  return (
    <div class="contact-card" data-contact={jid}>
      <ErrorLine error={contact.error} />
      {c && (
        <>
          {c.pictureUrl ? <img class="avatar" src={c.pictureUrl} alt="" /> : <div class="avatar placeholder" aria-hidden="true">👤</div>}
          <dl class="facts">
            <dt>Name</dt>
            <dd>{c.name ?? c.pushName ?? c.verifiedName ?? '—'}</dd>
            {c.verifiedName && (
              <>
                <dt>Business</dt>
                <dd data-verified-name>{c.verifiedName} <span class="muted">verified by WhatsApp</span></dd>
              </>
            )}
            <dt>Phone</dt>
            <dd>{c.phoneNumber ? `+${c.phoneNumber}` : '—'}</dd>
            <dt>About</dt>
            <dd>{c.about ?? <span class="muted">hidden or none</span>}</dd>
          </dl>
          <button
            type="button"
            class={c.blocked ? '' : 'danger'}
            disabled={block.busy}
            onClick={() => block.run(async () => contact.setData({ ...c, ...(c.blocked ? await api.unblock(sessionId, jid) : await api.block(sessionId, jid)) }))}
          >
            {c.blocked ? 'Unblock' : 'Block'}
          </button>
          <ErrorLine error={block.error} />
        </>
      )}
    </div>
  );
}

function mediaType(mimetype: string): 'image' | 'video' | 'audio' | 'document' | 'sticker' {
  if (mimetype === 'image/webp') return 'sticker';
  if (mimetype.startsWith('image/')) return 'image';
  if (mimetype.startsWith('video/')) return 'video';
  if (mimetype.startsWith('audio/')) return 'audio';
  return 'document';
}

function toBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** `15551234567@s.whatsapp.net` → `+15551234567`; groups and LIDs as they are. */
function displayJid(jid: string): string {
  const m = jid.match(/^(\d+)@s\.whatsapp\.net$/);
  return m ? `+${m[1]}` : jid;
}

/** One line for a message in the chat list or a quote. */
function preview(m: MessageView): string {
  if (m.revokedAt) return 'deleted message';
  const prefix = m.direction === 'out' ? 'You: ' : '';
  const body =
    m.text ??
    m.media?.caption ??
    (m.poll ? `📊 ${m.poll.name}` : m.location ? '📍 location' : m.contact ? `👤 ${m.contact.fullName}` : m.type === 'voice' ? '🎤 voice note' : m.media ? `📎 ${m.type}` : m.type);
  return prefix + body;
}
