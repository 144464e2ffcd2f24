import { api, ApiError, type LabelView } from '../api';
import { ErrorLine, useAction, useLoad } from '../ui';

/**
 * WhatsApp Business labels on the inbox (CONTRACT 13): the account's labels (`GET …/labels`), the chips a chat carries
 * in the chat list, and the thread header's control that adds and removes them. A personal account has no labels: the
 * API answers 409 and the control says so.
 */

/** The account's labels, or why it has none (a personal account: the API's 409). */
export interface AccountLabels {
  list: LabelView[];
  unavailable: string | null;
}

export function useAccountLabels(sessionId: string) {
  return useLoad<AccountLabels>(
    () =>
      api.labels(sessionId).then(
        (r) => ({ list: r.data, unavailable: null }),
        (err: unknown) => {
          if (err instanceof ApiError && err.status === 409) return { list: [], unavailable: err.message };
          throw err;
        },
      ),
    [sessionId],
  );
}

/** WhatsApp Business's label palette, by color index (the app's 20 colors, approximately). */
const PALETTE = [
  '#ff9dff', '#d3a91d', '#6d7cce', '#d7e752', '#00d0e2', '#ffc5c7', '#93ceac', '#f74848', '#00a0f2', '#83e422',
  '#ffaf04', '#b5ebff', '#9ba6ff', '#9368cf', '#fd8d62', '#2fbc53', '#ff6f73', '#48d3c1', '#d48fb7', '#5a9bdc',
];

export const labelColor = (color: number) => PALETTE[((color % PALETTE.length) + PALETTE.length) % PALETTE.length];

/** A label as a chip: its color and name (an id the account does not list shows as the id). */
export function LabelChip({ id, labels }: { id: string; labels: LabelView[] }) {
  const label = labels.find((l) => l.id === id);
  return (
    <span class="label-chip" data-label-id={id} title={label ? `label ${label.name}` : `label ${id}`}>
      <i style={{ background: label ? labelColor(label.color) : '#c4cbd0' }} aria-hidden="true" />
      {label?.name || `#${id}`}
    </span>
  );
}

/**
 * The open chat's labels, each a checkbox: checking adds the label to the chat on the account, unchecking removes it.
 * `onChanged` gets the chat's labels as the account answered.
 */
export function LabelsControl({ sessionId, chatJid, carried, labels, onChanged }: {
  sessionId: string;
  chatJid: string;
  carried: string[];
  labels: AccountLabels | null;
  onChanged: (labelIds: string[]) => void;
}) {
  const change = useAction();
  if (!labels) return <p class="muted labels-panel">Loading labels…</p>;
  if (labels.unavailable) {
    return (
      <p class="muted labels-panel" data-labels-unavailable role="note">
        Labels are a WhatsApp Business feature: this session's account is a personal one, so its chats cannot carry labels.
      </p>
    );
  }
  const toggle = (labelId: string, on: boolean) =>
    change.run(async () => {
      const answer = on ? await api.addChatLabel(sessionId, chatJid, labelId) : await api.removeChatLabel(sessionId, chatJid, labelId);
      onChanged(answer.labels.map((l) => l.id));
    });
  return (
    <fieldset class="labels-panel" data-labels-for={chatJid} disabled={change.busy}>
      <legend>Labels</legend>
      {!labels.list.length && <p class="muted">The account has no labels yet: create them in WhatsApp Business on the phone.</p>}
      {labels.list.map((l) => (
        <label key={l.id} class="label-option">
          <input type="checkbox" name="label" value={l.id} checked={carried.includes(l.id)} onChange={(e) => toggle(l.id, e.currentTarget.checked)} />
          <LabelChip id={l.id} labels={labels.list} />
        </label>
      ))}
      <ErrorLine error={change.error} />
    </fieldset>
  );
}
