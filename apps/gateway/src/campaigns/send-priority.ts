/**
 * Ordinary sends before campaign work, on one gateway (issue 43 item 5; docs/campaigns.md, "Ordinary sends first").
 *
 * An ordinary send (a message the API accepted, or a scheduled send that came due: anything not a campaign's) and a
 * campaign's work share the gateway's event loop, its PostgreSQL pool, PostgreSQL's and the simulator's or the
 * network's CPU. Campaign work is paced in seconds; an ordinary send is waited for by a caller. So campaign work (a
 * campaign's step in the scheduler, the send of a campaign's message by its session's sender) takes a turn here first:
 *
 * - it starts only while no ordinary send is under way on the gateway (from when its sender read it until the network
 *   took it), or once it has waited `maxWaitMs` for that (a gateway that always has an ordinary send under way still
 *   moves its campaigns, each piece of work at most that much later);
 * - at most `slots` pieces of campaign work run at once, in the order they asked (many campaigns falling due on the same
 *   tick, or many sessions' campaign messages settling in the same group commit, do not run as one burst).
 *
 * Work already started is never interrupted: a turn only delays what comes next, and nothing a turn delays is lost (a
 * campaign's message stays queued, a step's campaign stays due), so pacing (a delay only grows), caps, windows and
 * exactly once are unchanged. A paused campaign's message is checked for the pause after its turn, not before.
 */

/** Ends what was started (an ordinary send, a campaign's turn); calling it again does nothing. */
export type EndTurn = () => void;

export interface SendPriorityOptions {
  /** pieces of campaign work under way at once at most */
  slots: number;
  /** how long campaign work waits for the ordinary sends under way before it starts anyway */
  maxWaitMs: number;
  clock?: () => number;
}

interface Waiter {
  since: number;
  start: (end: EndTurn) => void;
}

export class SendPriority {
  private ordinary = 0;
  private running = 0;
  private readonly waiting: Waiter[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly clock: () => number;

  constructor(private readonly options: SendPriorityOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /** An ordinary send is under way until the returned function is called. */
  ordinaryStarted(): EndTurn {
    this.ordinary += 1;
    return this.once(() => {
      this.ordinary -= 1;
      this.pump();
    });
  }

  /** Resolves when a piece of campaign work may start; it holds one of the slots until the returned function is called. */
  campaignTurn(): Promise<EndTurn> {
    return new Promise((start) => {
      this.waiting.push({ since: this.clock(), start });
      this.pump();
    });
  }

  /** Ordinary sends under way, campaign work under way and waiting (metrics, tests). */
  state(): { ordinary: number; running: number; waiting: number } {
    return { ordinary: this.ordinary, running: this.running, waiting: this.waiting.length };
  }

  /** Starts waiting campaign work, oldest first, while a slot is free and no ordinary send holds it back. */
  private pump(): void {
    while (this.waiting.length > 0 && this.running < this.options.slots) {
      const head = this.waiting[0];
      if (this.ordinary > 0 && this.clock() - head.since < this.options.maxWaitMs) break;
      this.waiting.shift();
      this.running += 1;
      head.start(
        this.once(() => {
          this.running -= 1;
          this.pump();
        }),
      );
    }
    this.armTimer();
  }

  /** Wakes the pump when the oldest waiting work has waited long enough for the ordinary sends under way. */
  private armTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.waiting.length === 0 || this.ordinary === 0 || this.running >= this.options.slots) return;
    const wait = Math.max(0, this.waiting[0].since + this.options.maxWaitMs - this.clock());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pump();
    }, wait);
    this.timer.unref?.();
  }

  private once(end: () => void): EndTurn {
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      end();
    };
  }
}
