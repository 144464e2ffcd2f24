import { ROLE_PERMISSIONS, ROLES, type Role } from '@app/contracts';
import { useState } from 'preact/hooks';
import { api, type InvitationView, type MemberView } from '../api';
import { useCan, useMe } from '../me';
import { type Action, ActionForm, ErrorLine, type Loaded, Panel, plural, ShownOnce, useAction, useLoad, WhenIso } from '../ui';
import { ChangePassword } from './account';
import { ApiKeysScreen } from './api-keys';
import { AuditLogScreen } from './audit-log';

/**
 * The organization run by its owners and admins (CONTRACT 14, docs/auth.md): members and invitations, API keys, the
 * audit log, and the caller's own password. Each part is offered only to a caller holding its permission, so nobody
 * is shown a button whose call would be refused.
 */
const TABS = [
  { path: 'members', label: 'Members', permission: 'members:manage' },
  { path: 'api-keys', label: 'API keys', permission: 'apikeys:manage' },
  { path: 'audit', label: 'Audit log', permission: 'audit:read' },
  { path: 'password', label: 'Password', permission: null },
] as const;
type Tab = (typeof TABS)[number]['path'];

export function OrganizationScreen({ tab }: { tab?: string }) {
  const me = useMe();
  const can = useCan();
  // the password is a person's; an API key has none
  const offered = TABS.filter((t) => (t.permission ? can(t.permission) : me.kind === 'user'));
  const current: Tab | undefined = offered.find((t) => t.path === tab)?.path ?? offered[0]?.path;
  return (
    <>
      <OrganizationFacts key={current} />
      <nav class="subnav" aria-label="Organization">
        {offered.map((t) => <a href={`#/organization/${t.path}`} class={t.path === current ? 'current' : ''}>{t.label}</a>)}
      </nav>
      {current === 'members' && <MembersScreen />}
      {current === 'api-keys' && <ApiKeysScreen />}
      {current === 'audit' && <AuditLogScreen />}
      {current === 'password' && <ChangePassword />}
      {!current && <p class="muted">This credential manages nothing of the organization.</p>}
    </>
  );
}

/** Name, quotas and usage (any credential); renaming needs `members:manage`. */
function OrganizationFacts() {
  const can = useCan();
  const org = useLoad(() => api.organization());
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState('');
  const rename = useAction();
  const o = org.data;
  return (
    <Panel
      title={o ? o.name : 'Organization'}
      actions={can('members:manage') && o && <button onClick={() => (setName(o.name), setRenaming(!renaming))}>{renaming ? 'Cancel' : 'Rename'}</button>}
    >
      <ErrorLine error={org.error} />
      {renaming && (
        <ActionForm action={rename} submit={async () => (org.setData(await api.renameOrganization(name.trim())), setRenaming(false))}>
          <label class="grow">Name <input name="orgName" value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
          <button type="submit" class="primary" disabled={rename.busy}>Save</button>
        </ActionForm>
      )}
      {o && (
        <dl class="facts" data-testid="organization">
          <dt>Id</dt><dd class="mono">{o.id}</dd>
          <dt>Created</dt><dd><WhenIso at={o.createdAt} /></dd>
          <dt>Sessions</dt><dd>{o.usage.sessions} of {o.quotas.sessions}</dd>
          <dt>Webhooks and sinks</dt><dd>{o.usage.webhooks} of {o.quotas.webhooks}</dd>
          <dt>API keys</dt><dd>{o.usage.apiKeys} of {o.quotas.apiKeys}</dd>
          <dt>Members</dt><dd>{o.usage.members}{o.quotas.members !== null ? ` of ${o.quotas.members}` : ''} <span class="muted">(pending invitations included)</span></dd>
        </dl>
      )}
    </Panel>
  );
}

/**
 * The roles this caller may give: only an owner (a person) makes owners, and nobody grants a role holding a permission
 * the caller lacks (the API's no-escalation rule, docs/auth.md).
 */
function useGrantableRoles(): Role[] {
  const me = useMe();
  const can = useCan();
  return ROLES.filter((r) => (r === 'owner' ? me.kind === 'user' && me.role === 'owner' : ROLE_PERMISSIONS[r].every(can)));
}

type ShownLink = { label: string; url: string };

/** Members and invitations: one row action at a time across both lists, its failure shown above the members. */
function MembersScreen() {
  const members = useLoad(() => api.members().then((p) => p.data));
  const invitations = useLoad(() => api.invitations().then((p) => p.data));
  const roles = useGrantableRoles();
  const [link, setLink] = useState<ShownLink | null>(null);
  const row = useAction();
  return (
    <>
      {link && <ShownOnce label={link.label} value={link.url} onDone={() => setLink(null)} />}
      <InvitePanel roles={roles} showLink={setLink} reloadInvitations={invitations.reload} />
      <MembersPanel members={members} roles={roles} row={row} showLink={setLink} />
      <InvitationsPanel invitations={invitations} row={row} />
    </>
  );
}

function InvitePanel({ roles, showLink, reloadInvitations }: { roles: Role[]; showLink: (link: ShownLink) => void; reloadInvitations: () => Promise<unknown> }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const invite = useAction();
  return (
    <Panel title="Invite a member">
      <ActionForm
        action={invite}
        submit={async () => {
          const created = await api.invite(email.trim(), role);
          showLink({ label: `Invitation link for ${created.email}`, url: created.url });
          setEmail('');
          await reloadInvitations();
        }}
      >
        <label class="grow">Email <input name="inviteEmail" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} placeholder="colleague@example.com" /></label>
        <label>Role
          <select name="inviteRole" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {roles.map((r) => <option value={r}>{r}</option>)}
          </select>
        </label>
        <button type="submit" class="primary" disabled={invite.busy}>Invite</button>
      </ActionForm>
      <p class="muted">The link is shown once here (and mailed when the server has SMTP configured); it expires after 7 days.</p>
    </Panel>
  );
}

interface MemberRowsProps {
  members: Loaded<MemberView[]>;
  roles: Role[];
  row: Action;
  showLink: (link: ShownLink) => void;
}

function MembersPanel(props: MemberRowsProps) {
  const { members, row } = props;
  return (
    <Panel title="Members" actions={<button onClick={members.reload}>Refresh</button>}>
      <ErrorLine error={members.error} />
      <ErrorLine error={row.error} />
      <table class="list" data-testid="members">
        <thead><tr><th>Member</th><th>Role</th><th>Joined</th><th>Last sign-in</th><th /></tr></thead>
        <tbody>
          {(members.data ?? []).map((m) => <MemberRow key={m.id} member={m} {...props} />)}
          {members.data && !members.data.length && <tr><td colSpan={5} class="muted">No members.</td></tr>}
        </tbody>
      </table>
    </Panel>
  );
}

function MemberRow({ member: m, members, roles, row, showLink }: MemberRowsProps & { member: MemberView }) {
  const me = useMe();
  // an owner's row is an owner's to change (a person); the API answers 403 otherwise
  const mayAct = m.role !== 'owner' || (me.kind === 'user' && me.role === 'owner');
  return (
    <tr data-member-id={m.id} data-member-email={m.email}>
      <td>{m.name ?? m.email}{m.name && <div class="muted">{m.email}</div>}{m.id === me.id && <div class="muted">you</div>}</td>
      <td>{mayAct && roles.includes(m.role) ? <RoleSelect member={m} members={members} roles={roles} row={row} /> : m.role}</td>
      <td><WhenIso at={m.createdAt} /></td>
      <td><WhenIso at={m.lastLoginAt} /></td>
      <td class="actions">
        {mayAct && (
          <>
            <button
              disabled={row.busy}
              onClick={() => row.run(async () => showLink({ label: `Password reset link for ${m.email}`, url: (await api.resetLink(m.id)).url }))}
            >
              Reset password
            </button>
            <button
              class="danger"
              disabled={row.busy}
              onClick={() =>
                confirm(`Remove ${m.email} from the organization? Their sign-ins stop working at once.`) &&
                row.run(async () => (await api.removeMember(m.id), members.setData((l) => (l ?? []).filter((x) => x.id !== m.id))))
              }
            >
              Remove
            </button>
          </>
        )}
      </td>
    </tr>
  );
}

function RoleSelect({ member: m, members, roles, row }: { member: MemberView; members: Loaded<MemberView[]>; roles: Role[]; row: Action }) {
  return (
    <select
      name="role"
      aria-label={`Role of ${m.email}`}
      value={m.role}
      disabled={row.busy}
      onChange={(e) => {
        const next = e.currentTarget.value as Role;
        row.run(async () => {
          try {
            const changed = await api.changeRole(m.id, next);
            members.setData((l) => (l ?? []).map((x) => (x.id === m.id ? changed : x)));
          } catch (err) {
            await members.reload(); // the select shows what the API kept
            throw err;
          }
        });
      }}
    >
      {roles.map((r) => <option value={r}>{r}</option>)}
    </select>
  );
}

function InvitationsPanel({ invitations, row }: { invitations: Loaded<InvitationView[]>; row: Action }) {
  return (
    <Panel title="Pending invitations">
      <ErrorLine error={invitations.error} />
      <table class="list" data-testid="invitations">
        <thead><tr><th>Email</th><th>Role</th><th>Sent</th><th>Expires</th><th /></tr></thead>
        <tbody>
          {(invitations.data ?? []).map((i) => (
            <tr key={i.id} data-invitation-id={i.id}>
              <td>{i.email}</td>
              <td>{i.role}</td>
              <td><WhenIso at={i.createdAt} /></td>
              <td><WhenIso at={i.expiresAt} /></td>
              <td class="actions">
                <button
                  class="danger"
                  disabled={row.busy}
                  onClick={() => row.run(async () => (await api.withdrawInvitation(i.id), invitations.setData((l) => (l ?? []).filter((x) => x.id !== i.id))))}
                >
                  Revoke
                </button>
              </td>
            </tr>
          ))}
          {invitations.data && !invitations.data.length && <tr><td colSpan={5} class="muted">No pending invitations.</td></tr>}
        </tbody>
      </table>
      <p class="muted">{plural(invitations.data?.length ?? 0, 'invitation')} waiting to be accepted.</p>
    </Panel>
  );
}
