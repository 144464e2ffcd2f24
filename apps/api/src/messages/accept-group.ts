/** The most accepts one statement takes; more waiting go in the statements after it, in their order. */
export const ACCEPT_GROUP_MAX = 100;

/** How a group is bounded: by count, and by the sum of a weight (media bytes) that one statement should carry. */
export interface AcceptGroupLimits<T> {
  max: number;
  /** a group's weight stops growing past this; an accept heavier on its own still goes, alone */
  maxWeight: number;
  weightOf(item: T): number;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/**
 * The API's group commit of concurrent accepts (issue 24): the accepts of one key (a session of an organization) go
 * to PostgreSQL together, without a timer. When no statement of the key is in flight, an accept is written at once,
 * alone (a lone request waits for nothing); while one is, those that arrive wait and are written together, in their
 * arrival order, as the next statement when it returns (bounded by `limits`). The accepts of a key thus
 * commit one statement after the other, never two at once, which is also what the session row's lock would impose.
 *
 * `write` gets a group in arrival order and answers one result per accept, at its position; when it throws, every
 * accept of that group fails with its error and the next group is written all the same.
 */
export class AcceptGroup<T, R> {
  /** per key with a statement in flight: the accepts waiting for it (a key is absent when none is in flight) */
  private readonly waiting = new Map<string, Array<Waiting<T, R>>>();

  private readonly limits: AcceptGroupLimits<T>;

  constructor(
    private readonly write: (group: T[]) => Promise<R[]>,
    limits: Partial<AcceptGroupLimits<T>> = {},
  ) {
    this.limits = { max: ACCEPT_GROUP_MAX, maxWeight: Infinity, weightOf: () => 0, ...limits };
  }

  /** The result of `item`'s accept, once the statement that wrote it (with the others of its group) returned. */
  submit(key: string, item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const accept = { item, resolve, reject };
      const queue = this.waiting.get(key);
      if (queue) queue.push(accept);
      else {
        this.waiting.set(key, []);
        void this.writeAll(key, [accept]);
      }
    });
  }

  /** How many accepts of `key` wait for its statement in flight (diagnostics; tests hold a statement to see a group form). */
  waitingFor(key: string): number {
    return this.waiting.get(key)?.length ?? 0;
  }

  /** Writes `group`, then what arrived meanwhile, until nothing waits; the key is dropped in the step that finds none. */
  private async writeAll(key: string, group: Array<Waiting<T, R>>): Promise<void> {
    const queue = this.waiting.get(key)!;
    while (group.length > 0) {
      try {
        const results = await this.write(group.map((a) => a.item));
        if (results.length !== group.length) throw new Error(`an accept group of ${group.length} got ${results.length} results`);
        group.forEach((a, i) => a.resolve(results[i]));
      } catch (err) {
        for (const a of group) a.reject(err);
      }
      group = queue.splice(0, this.takes(queue));
    }
    this.waiting.delete(key);
  }

  /** How many of the first waiting accepts the next statement takes: at least one, then while the limits allow. */
  private takes(queue: Array<Waiting<T, R>>): number {
    const { max, maxWeight, weightOf } = this.limits;
    let n = 0;
    let weight = 0;
    while (n < queue.length && n < max) {
      weight += weightOf(queue[n].item);
      if (n > 0 && weight > maxWeight) break;
      n += 1;
    }
    return n;
  }
}
