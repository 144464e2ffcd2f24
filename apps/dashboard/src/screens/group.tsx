import { useState } from 'preact/hooks';
import { api, type GroupDetails } from '../api';
import { ActionForm, ErrorLine, Panel, plural, useAction, useLoad } from '../ui';

type MemberAction = 'add' | 'remove' | 'promote' | 'demote';

/**
 * A group the session is in (CONTRACT 13): its members with admin badges, who can be added, removed, promoted or
 * demoted; its subject, description and settings; its invite link, to copy or revoke. WhatsApp's answer per member
 * (`not_admin`, `already`, …) is shown next to the change that asked for it.
 */
export function GroupScreen({ sessionId, groupJid }: { sessionId: string; groupJid: string }) {
  const group = useLoad(() => api.group(sessionId, groupJid), [sessionId, groupJid]);
  const g = group.data;
  return (
    <>
      <p>
        <a href={`#/sessions/${encodeURIComponent(sessionId)}`}>← Session</a>
      </p>
      <ErrorLine error={group.error} />
      {g && (
        <>
          <GroupSettings sessionId={sessionId} group={g} onChange={group.setData} />
          <Members sessionId={sessionId} group={g} onChange={group.reload} />
          <Invite sessionId={sessionId} groupJid={groupJid} />
        </>
      )}
    </>
  );
}

function GroupSettings({ sessionId, group: g, onChange }: { sessionId: string; group: GroupDetails; onChange: (g: GroupDetails) => void }) {
  const [subject, setSubject] = useState(g.subject);
  const [description, setDescription] = useState(g.description);
  const save = useAction();
  const toggle = useAction();
  return (
    <Panel title={g.subject}>
      <p class="muted mono">{g.groupJid}</p>
      <ActionForm action={save} submit={async () => onChange(await api.updateGroup(sessionId, g.groupJid, { subject: subject.trim(), description }))}>
        <label>Subject <input name="subject" required maxLength={100} value={subject} onInput={(e) => setSubject(e.currentTarget.value)} /></label>
        <label class="grow">Description <input name="description" maxLength={2048} value={description} onInput={(e) => setDescription(e.currentTarget.value)} /></label>
        <button type="submit" disabled={save.busy}>Save</button>
      </ActionForm>
      <div class="actions" data-settings>
        {(['isAnnounce', 'isLocked'] as const).map((key) => (
          <label class="check" key={key}>
            <input
              type="checkbox"
              name={key}
              checked={g[key]}
              disabled={toggle.busy}
              onChange={(e) => {
                const value = e.currentTarget.checked;
                toggle.run(async () => onChange(await api.updateGroup(sessionId, g.groupJid, { [key]: value })));
              }}
            />
            {key === 'isAnnounce' ? 'Only admins send messages' : 'Only admins edit the group info'}
          </label>
        ))}
        <ErrorLine error={toggle.error} />
      </div>
    </Panel>
  );
}

function Members({ sessionId, group: g, onChange }: { sessionId: string; group: GroupDetails; onChange: () => void }) {
  const [adding, setAdding] = useState('');
  const [outcome, setOutcome] = useState<string | null>(null);
  const change = useAction();
  const act = (action: MemberAction, participants: string[]) =>
    change.run(async () => {
      const { data } = await api.groupParticipants(sessionId, g.groupJid, action, participants);
      setOutcome(data.map((r) => `${r.jid.replace(/@.*/, '')}: ${r.status.replace(/_/g, ' ')}`).join(', '));
      onChange();
    });
  return (
    <Panel title={`Members (${plural(g.participantList.length, 'member')})`}>
      <ActionForm
        action={change}
        submit={async () => {
          act('add', adding.split(/[\s,]+/).filter(Boolean));
          setAdding('');
        }}
      >
        <label class="grow">Add <input name="add" placeholder="15551234567, 15557654321" value={adding} onInput={(e) => setAdding(e.currentTarget.value)} /></label>
        <button type="submit" disabled={change.busy}>Add</button>
      </ActionForm>
      {outcome && <p class="ok" data-outcome>{outcome}</p>}
      <table class="list" data-testid="members">
        <thead><tr><th>Member</th><th>Role</th><th /></tr></thead>
        <tbody>
          {g.participantList.map((m) => (
            <tr key={m.jid} data-member={m.jid}>
              <td class="mono">{m.jid}</td>
              <td>{m.isSuperAdmin ? <span class="badge badge-working">owner</span> : m.isAdmin ? <span class="badge badge-working">admin</span> : <span class="muted">member</span>}</td>
              <td class="actions">
                {!m.isSuperAdmin && (m.isAdmin ? <button onClick={() => act('demote', [m.jid])}>Demote</button> : <button onClick={() => act('promote', [m.jid])}>Make admin</button>)}
                {!m.isSuperAdmin && <button class="danger" onClick={() => act('remove', [m.jid])}>Remove</button>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Panel>
  );
}

function Invite({ sessionId, groupJid }: { sessionId: string; groupJid: string }) {
  const invite = useLoad(() => api.groupInvite(sessionId, groupJid), [sessionId, groupJid]);
  const revoke = useAction();
  const [copied, setCopied] = useState(false);
  return (
    <Panel title="Invite link">
      <ErrorLine error={invite.error} />
      {invite.data && (
        <div class="actions">
          <code class="mono" data-invite>{invite.data.url}</code>
          <button onClick={() => navigator.clipboard?.writeText(invite.data!.url).then(() => setCopied(true), () => undefined)}>{copied ? 'Copied' : 'Copy'}</button>
          <button class="danger" disabled={revoke.busy} onClick={() => revoke.run(async () => (invite.setData(await api.revokeGroupInvite(sessionId, groupJid)), setCopied(false)))}>Revoke</button>
          <ErrorLine error={revoke.error} />
        </div>
      )}
    </Panel>
  );
}
