/**
 * What the delivery side sees of an event of a fresh fan-out: its rows are inserted (claimed) before their calls,
 * in the batched writer's statements, and the statement that writes the last of them marks it fanned out. The
 * fan-out's tracker owns the counting and what follows (the stream acknowledgement); the writer only reports rows.
 */
export interface EventRows {
  readonly eventId: string;
  /** true when these `n` rows are all it still waits for (and none failed) */
  completedBy(n: number): boolean;
  /** a statement committed `n` of its rows */
  written(n: number): void;
  /** one of its rows could not be written */
  fail(): void;
}

/**
 * The events a statement marks fanned out: those whose remaining unwritten rows are all in it (an
 * event with no delivery at all has none left). A failed event is never marked.
 */
export function eventsCompletedBy<E extends EventRows>(rowsByEvent: Map<E, number>): E[] {
  const done: E[] = [];
  for (const [event, n] of rowsByEvent) if (event.completedBy(n)) done.push(event);
  return done;
}
