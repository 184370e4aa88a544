import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import type { Subscriber } from './Subscriber';
import { nameKey } from './peerPresence';

/**
 * A tab has one awareness client id per doc (kept across reconnects); a few more allow for a
 * reload whose old session has not closed yet. Bounds what one session can make every other
 * session receive on subscribe.
 */
const maxClientsPerSubscriber = 4;
/**
 * Client ids one session may introduce in a doc over its life: a tab gets a new one each time it
 * reopens a file. Past it, new ids are not relayed (every tab keeps a little per id it has seen).
 */
const maxClientsEverPerSubscriber = 64;

interface Entry {
  clock: number;
  /** The JSON text of the state as the gateway rebuilt it (`restampState`), kept encoded. */
  stateJson: string;
  owner: Subscriber;
  /** For a state relayed from another gateway: its user's name, lower-cased (no posing across gateways). */
  remoteName?: string;
  /** For a state relayed from another gateway: its user's colour, lower-cased (colours stay apart across gateways). */
  remoteColor?: string;
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
  /** The client ids each session has set in this doc, so far. */
  private readonly introduced = new WeakMap<Subscriber, Set<number>>();
  /** The last clock of each state the gateway published itself (a handful per doc). */
  private readonly publishedClocks = new Map<number, number>();

  /**
   * Applies an update from `from`, each state rebuilt by `restamp` (null: not a state). Returns
   * the entries to relay to the other subscribers (only those `from` may set; possibly none),
   * or a refusal — a state that is not one, or more client ids than a tab has — which the
   * session treats as a malformed frame. Throws on bytes that are not an awareness update.
   */
  apply(payload: Uint8Array, from: Subscriber, restamp: (stateJson: string) => string | null): AwarenessEntry[] | { refused: string } {
    const decoder = decoding.createDecoder(payload);
    const count = decoding.readVarUint(decoder);
    if (count > maxClientsPerSubscriber) return { refused: `${count} awareness states in one frame` };
    const accepted: AwarenessEntry[] = [];
    for (let i = 0; i < count; i++) {
      const clientId = decoding.readVarUint(decoder);
      const clock = decoding.readVarUint(decoder);
      const announced = decoding.readVarString(decoder);
      const existing = this.entries.get(clientId);
      // A reconnecting tab keeps its client id while its old session may not have closed yet:
      // the same link may take the id over, anyone else may not.
      if (existing && existing.owner !== from && existing.owner.linkId !== from.linkId) continue;
      if (existing && clock < existing.clock) continue;
      if (announced === 'null') {
        this.entries.delete(clientId);
        accepted.push({ clientId, clock, stateJson: announced });
        continue;
      }
      const stateJson = restamp(announced);
      if (stateJson === null) return { refused: 'an awareness state that is not one' };
      let mine = this.introduced.get(from);
      if (!mine) this.introduced.set(from, (mine = new Set()));
      if (!mine.has(clientId)) {
        if (mine.size >= maxClientsEverPerSubscriber) continue; // a session cycling through ids
        mine.add(clientId);
      }
      if (existing?.owner !== from && this.ownedBy(from) >= maxClientsPerSubscriber) {
        return { refused: `more than ${maxClientsPerSubscriber} awareness client ids` };
      }
      this.entries.set(clientId, { clock, stateJson, owner: from });
      accepted.push({ clientId, clock, stateJson });
    }
    return accepted;
  }

  /**
   * Applies states another gateway relayed (rebuilt there already), each owned here by
   * `ownerFor(linkId)`: the same rules as `apply` — only the same link takes over a client id,
   * never an older clock. Returns the entries that changed, to send to this gateway's sessions.
   */
  applyRemote(entries: ReadonlyArray<AwarenessEntry & { linkId: string }>, ownerFor: (linkId: string) => Subscriber): AwarenessEntry[] {
    const accepted: AwarenessEntry[] = [];
    for (const { clientId, clock, stateJson, linkId } of entries) {
      const existing = this.entries.get(clientId);
      if (existing && clock < existing.clock) continue;
      if (stateJson === 'null') {
        if (!existing) continue;
        this.entries.delete(clientId);
      } else {
        if (existing && existing.owner.linkId !== linkId) continue;
        const user = remoteUserOf(stateJson);
        this.entries.set(clientId, { clock, stateJson, owner: ownerFor(linkId), remoteName: user.name, remoteColor: user.color });
      }
      accepted.push({ clientId, clock, stateJson });
    }
    return accepted;
  }

  /** Whether someone of another link, on another gateway, shows as a name with this `nameKey`. */
  remoteNameTaken(key: string, exceptLinkId: string): boolean {
    for (const entry of this.entries.values()) {
      if (entry.remoteName === key && entry.owner.linkId !== exceptLinkId) return true;
    }
    return false;
  }

  /** Adds the colours people on other gateways show as to `into`. */
  remoteColors(into: Set<string>): void {
    for (const entry of this.entries.values()) if (entry.remoteColor) into.add(entry.remoteColor);
  }

  /** The session (or agent, or other gateway) whose state a client id carries now, if any. */
  ownerOf(clientId: number): Subscriber | null {
    return this.entries.get(clientId)?.owner ?? null;
  }

  /** The link that owns a client id's state (the agent's: 'agent'), or '' when none. */
  linkIdOf(clientId: number): string {
    return this.entries.get(clientId)?.owner.linkId ?? '';
  }

  /** States this gateway's own sessions and agent set (not those relayed from other gateways). */
  ownedHere(isRemote: (owner: Subscriber) => boolean): AwarenessEntry[] {
    return [...this.entries]
      .filter(([, e]) => !isRemote(e.owner))
      .map(([clientId, e]) => ({ clientId, clock: e.clock, stateJson: e.stateJson }));
  }

  private ownedBy(owner: Subscriber): number {
    let count = 0;
    for (const entry of this.entries.values()) if (entry.owner === owner) count++;
    return count;
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

  /**
   * Known states for a session that just subscribed, at most `limit`: one per owner first (each
   * tab's, the agent's), the newest first, then the owners' other ids.
   */
  snapshot(limit = Infinity): AwarenessEntry[] {
    const newest = [...this.entries].reverse();
    const owners = new Set<Subscriber>();
    const first: AwarenessEntry[] = [];
    const rest: AwarenessEntry[] = [];
    for (const [clientId, e] of newest) {
      const entry = { clientId, clock: e.clock, stateJson: e.stateJson };
      if (owners.has(e.owner)) rest.push(entry);
      else (owners.add(e.owner), first.push(entry));
    }
    return [...first, ...rest].slice(0, limit);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * The user in a state the gateway rebuilt (`restampState`): the name as names compare (`nameKey`)
 * and the colour lower-cased; undefined where there is none.
 */
function remoteUserOf(stateJson: string): { name?: string; color?: string } {
  try {
    const user = (JSON.parse(stateJson) as { user?: { name?: unknown; color?: unknown } } | null)?.user;
    return { name: typeof user?.name === 'string' ? nameKey(user.name) : undefined, color: typeof user?.color === 'string' ? user.color.toLowerCase() : undefined };
  } catch {
    return {}; // converted: a state with no user takes no name or colour
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
