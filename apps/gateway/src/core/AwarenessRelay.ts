import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import type { Subscriber } from './Subscriber';

interface Entry {
  clock: number;
  /** The JSON text of the state, kept encoded: the gateway relays it and never reads it. */
  stateJson: string;
  owner: Subscriber;
}

export interface AwarenessEntry {
  clientId: number;
  clock: number;
  stateJson: string;
}

/**
 * The gateway's side of y-protocols awareness for one document. Unlike y-protocols'
 * `Awareness` it has no timers (the core takes time only from its clock): a session's states
 * are removed when the session leaves, and browsers expire silent peers themselves.
 * It also remembers which session announced each client id, so one session cannot move or
 * erase another's cursor.
 */
export class AwarenessRelay {
  private readonly entries = new Map<number, Entry>();
  /** The last clock of each state the gateway published itself (a handful per doc). */
  private readonly publishedClocks = new Map<number, number>();

  /**
   * Applies an update from `from`. Returns the update to relay to the other subscribers (only
   * the entries `from` may set), or null when nothing is left to relay; throws on bytes that
   * are not an awareness update, which the session treats as a malformed frame.
   */
  apply(payload: Uint8Array, from: Subscriber): AwarenessEntry[] | null {
    const decoder = decoding.createDecoder(payload);
    const count = decoding.readVarUint(decoder);
    const accepted: AwarenessEntry[] = [];
    for (let i = 0; i < count; i++) {
      const clientId = decoding.readVarUint(decoder);
      const clock = decoding.readVarUint(decoder);
      const stateJson = decoding.readVarString(decoder);
      const existing = this.entries.get(clientId);
      // A reconnecting tab keeps its client id while its old session may not have closed yet:
      // the same link may take the id over, anyone else may not.
      if (existing && existing.owner !== from && existing.owner.linkId !== from.linkId) continue;
      if (existing && clock < existing.clock) continue;
      if (stateJson === 'null') this.entries.delete(clientId);
      else this.entries.set(clientId, { clock, stateJson, owner: from });
      accepted.push({ clientId, clock, stateJson });
    }
    return accepted.length > 0 ? accepted : null;
  }

  /**
   * Sets a state the gateway itself publishes (the agent's cursor); null removes it. The clock
   * goes on across removals: browsers remember a removed client's clock and ignore a state that
   * comes back with a lower one (the agent keeps its client id from turn to turn).
   */
  set(clientId: number, stateJson: string | null, owner: Subscriber): AwarenessEntry {
    const clock = (this.entries.get(clientId)?.clock ?? this.publishedClocks.get(clientId) ?? 0) + 1;
    this.publishedClocks.set(clientId, clock);
    if (stateJson === null) this.entries.delete(clientId);
    else this.entries.set(clientId, { clock, stateJson, owner });
    return { clientId, clock, stateJson: stateJson ?? 'null' };
  }

  /** The display name a subscriber announced (awareness `user.name`), if any. */
  nameOf(owner: Subscriber): string | null {
    for (const entry of this.entries.values()) {
      if (entry.owner !== owner) continue;
      try {
        const name = (JSON.parse(entry.stateJson) as { user?: { name?: unknown } } | null)?.user?.name;
        if (typeof name === 'string') return name.slice(0, 60);
      } catch {
        // A state that is not JSON is the client's problem; it just has no name here.
      }
    }
    return null;
  }

  /** Removes everything `owner` announced and returns the removals to broadcast. */
  removeOwnedBy(owner: Subscriber): AwarenessEntry[] {
    const removed: AwarenessEntry[] = [];
    for (const [clientId, entry] of this.entries) {
      if (entry.owner !== owner) continue;
      this.entries.delete(clientId);
      removed.push({ clientId, clock: entry.clock + 1, stateJson: 'null' });
    }
    return removed;
  }

  /** Every known state, for a session that just subscribed. */
  snapshot(): AwarenessEntry[] {
    return [...this.entries].map(([clientId, e]) => ({ clientId, clock: e.clock, stateJson: e.stateJson }));
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Writes entries in y-protocols' awareness update format. */
export function writeAwarenessUpdate(encoder: encoding.Encoder, entries: AwarenessEntry[]): void {
  encoding.writeVarUint(encoder, entries.length);
  for (const entry of entries) {
    encoding.writeVarUint(encoder, entry.clientId);
    encoding.writeVarUint(encoder, entry.clock);
    encoding.writeVarString(encoder, entry.stateJson);
  }
}
