/**
 * Session actions for chat state: read marks, archive, pin, mute (CONTRACT 12). Each entry is one operation the API asks of a connected session through the
 * `session.action` command (commands.ts) and each engine performs (EngineConnection.perform): see session-actions.ts.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- its entries are added with the operations
export interface ChatActionMap {}
