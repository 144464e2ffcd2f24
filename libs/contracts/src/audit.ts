/** Who did something recorded in the audit log (CONTRACT 14). */
export const AUDIT_ACTOR_TYPES = ['user', 'apiKey', 'cli', 'system'] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

export const AUDIT_OUTCOMES = ['success', 'denied', 'failed'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

export interface AuditActor {
  type: AuditActorType;
  id: string | null;
  name: string | null;
}

/**
 * One entry of an organization's audit log: a state-changing call of the management surface or a refusal of one.
 * `changes` names the fields a change touched, never their values (a secret's value is never recorded).
 */
export interface AuditEntry {
  id: string;
  /** ISO 8601 */
  at: string;
  actor: AuditActor;
  /** `<target type>.<verb>`, e.g. `apikey.create`, `member.role`, `webhook.update`, `auth.login` */
  action: string;
  target: { type: string | null; id: string | null };
  outcome: AuditOutcome;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  changes: string[];
}
