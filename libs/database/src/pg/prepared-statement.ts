/**
 * A statement of a hot path: parsed and planned once per connection (a named prepared statement of the PostgreSQL
 * protocol), then only bound and executed. An unnamed statement is parsed and planned on every call, which was most of
 * PostgreSQL's CPU per message and per API request (docs/decisions.md, "Prepared statements on the hot paths").
 * Names are global per connection: one constant per statement, defined next to the repository that owns its table.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

const NAMES = new Map<string, string>();

/** Declares a statement once; the same name for a different text is a programming error, refused at load. */
export function preparedStatement(name: string, text: string): PreparedStatement {
  const known = NAMES.get(name);
  if (known !== undefined && known !== text) throw new Error(`prepared statement ${name} is declared twice with different SQL`);
  NAMES.set(name, text);
  return { name, text };
}
