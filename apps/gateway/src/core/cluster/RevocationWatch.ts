import type { Store } from '../ports/Store';
import type { Clock, TimerHandle } from '../ports/Clock';
import type { Log } from '../ports/Log';

export interface RevocationWatchDeps {
  store: Pick<Store, 'revokedLinks' | 'getLink'>;
  clock: Clock;
  /** Between two questions to the store. */
  intervalMs: number;
  /** The links of the sessions open on this gateway now. */
  openLinks(): Iterable<string>;
  /** Closes this gateway's sessions of a revoked link. */
  closeLink(linkId: string): void;
  log: Log;
}

/**
 * Revocations that hold when a message is lost (DESIGN §11.5). A revocation is announced on the
 * bus, and Redis pub/sub drops what is published while a gateway's subscription is down: its
 * sessions of that link would stay open and go on storing their edits. So:
 *
 * - while this gateway's bus connection is down, and until the store has been asked once after
 *   it came back, it may have missed one: every frame of a session but its cursors is let through
 *   only once the store says its link is not revoked (`stillValid`, a read per frame while this
 *   lasts);
 * - every `intervalMs` it asks the store which links of its open sessions are revoked (one
 *   query for all of them) and closes their sessions: a message lost without the connection
 *   dropping (the revoking gateway's publish failed) costs at most one interval.
 */
export class RevocationWatch {
  private timer: TimerHandle | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** The bus connection dropped and no check has completed since it came back. */
  private suspect = false;
  private interruptions = 0;

  constructor(private readonly deps: RevocationWatchDeps) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * A link announced revoked, or found so: its sessions here are closed. Nothing is remembered:
   * a session that opens later has its link checked in the store.
   */
  revokedHere(linkId: string): void {
    this.deps.closeLink(linkId);
  }

  /**
   * Whether a session of this link may go on: yes, unless an announcement may have been lost
   * and the store says it is revoked (a read; it throws StoreError if the store fails).
   */
  stillValid(linkId: string): boolean {
    if (!this.suspect) return true;
    if (this.deps.store.getLink(linkId)?.revokedAt === null) return true;
    this.revokedHere(linkId);
    return false;
  }

  /** The bus connection dropped: what is announced from now on may be lost. */
  interrupted(): void {
    this.suspect = true;
    this.interruptions++;
  }

  /** The bus connection is back: once the store has been asked, nothing announced before is missing. */
  resumed(): void {
    const since = this.interruptions;
    void this.check().then((asked) => {
      if (asked && since === this.interruptions) this.suspect = false;
    });
  }

  /** Asks the store, after any question already under way; resolves whether it answered. */
  check(): Promise<boolean> {
    const next = this.chain.then(() => this.ask());
    this.chain = next;
    return next;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.deps.clock.setTimeout(() => {
      this.timer = null;
      void this.check().finally(() => this.schedule());
    }, this.deps.intervalMs);
  }

  private async ask(): Promise<boolean> {
    const ids = [...this.deps.openLinks()];
    let revoked: string[];
    try {
      revoked = ids.length === 0 ? [] : await this.deps.store.revokedLinks(ids);
    } catch (error) {
      // The store is unreachable: its sessions fail on their own; the next interval asks again.
      this.deps.log('warn', 'could not check the links of open sessions', { error: String(error) });
      return false;
    }
    for (const linkId of revoked) {
      this.deps.log('info', 'closing the sessions of a link revoked elsewhere', { linkId });
      this.revokedHere(linkId);
    }
    return true;
  }
}
