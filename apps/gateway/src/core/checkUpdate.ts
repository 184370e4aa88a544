import { isHunkRecord, HUNKS_KEY, type HunkRecord, type IdRun } from '@flint/change-set';
import { FILE_TEXT_KEY, INDEX_ENTRIES_KEY } from '@flint/protocol';
import * as Y from 'yjs';

/**
 * What a client may write into a kind of document: its root types by name. Anything else —
 * another root, a nested type, an embed, a format, a map entry in a text — is refused, so a
 * participant can never put into a document something that another client cannot read back.
 */
export interface DocSchema {
  roots: ReadonlyMap<string, RootSchema>;
}

export type RootSchema =
  | { kind: 'text' }
  /**
   * A map of plain values; `accepts` says which entries are well-formed, given the entry the
   * document holds under that key now (undefined: none).
   */
  | { kind: 'map'; accepts: (key: string, value: unknown, existing: unknown, fresh: FreshClocks) => boolean };

/** Whether the clocks [clock, clock + length) of a client are written by the update being checked. */
export type FreshClocks = (client: number, clock: number, length: number) => boolean;

/**
 * The verdict on an update before any of it is applied:
 * - `malformed`: the bytes are not a Yjs update (Yjs would have applied part of it and thrown);
 * - `invalid`: a well-formed update that writes outside the schema, or deletes nothing (len 0);
 * - `incomplete`: it depends on changes the document does not have (yet): applied now, Yjs would
 *   keep it pending inside the document, out of reach of every limit;
 * - `foreign`: it writes under a Yjs client id another link's tab holds (LiveDoc.accept).
 */
export type UpdateCheck =
  /**
   * `trial`: text items whose neighbours come with them; their order is checked on a copy.
   * `writers`: the client ids the update writes new structs for.
   */
  | { ok: true; trial: TextItem[]; writers?: number[] }
  | { ok: false; kind: 'malformed' | 'invalid' | 'incomplete' | 'foreign'; reason: string };

/** A text item as Yjs will integrate it: where it starts (past what is known) and its neighbours. */
export interface TextItem {
  id: Y.ID;
  origin: Y.ID | null;
  rightOrigin: Y.ID | null;
  root: string;
  /** Whether a neighbour is an item of the same update, not yet in the document. */
  local: boolean;
}

/** Where a struct lives: a root type and, for map entries, its key; `gc`: garbage collected. */
type Place = { root: string; sub: string | null } | 'gc';

interface Placed {
  clock: number;
  end: number;
  place: Place;
}

const refuse = (kind: 'malformed' | 'invalid' | 'incomplete', reason: string): UpdateCheck => ({ ok: false, kind, reason });

/**
 * Decides, without touching `doc`, whether `update` can be applied whole: it decodes to the end,
 * every struct's origins are in the document or earlier in the update (in an order Yjs can
 * integrate), every deletion targets clocks that will exist, and everything it writes fits
 * `schema`. Applying an update that passes leaves nothing pending in the document.
 */
export function checkUpdate(doc: Y.Doc, update: Uint8Array, schema: DocSchema): UpdateCheck {
  let decoded: ReturnType<typeof Y.decodeUpdate>;
  try {
    decoded = Y.decodeUpdate(update);
  } catch (error) {
    return refuse('malformed', `not a Yjs update (${error instanceof Error ? error.message : String(error)})`);
  }
  const byClient = new Map<number, Array<Y.Item | Y.GC | Y.Skip>>();
  for (const struct of decoded.structs) {
    let list = byClient.get(struct.id.client);
    if (!list) byClient.set(struct.id.client, (list = []));
    list.push(struct);
  }
  const ends = new Map<number, number>();
  for (const struct of decoded.structs) {
    if (!(struct instanceof Y.Skip)) ends.set(struct.id.client, Math.max(ends.get(struct.id.client) ?? 0, struct.id.clock + struct.length));
  }
  const reader = new UpdatePlacer(ends, doc, schema);
  const failure = reader.integrate(byClient);
  if (failure) return failure;
  for (const [client, ranges] of decoded.ds.clients) {
    for (const { clock, len } of ranges) {
      if (len <= 0) return refuse('invalid', 'a deletion of nothing');
      if (clock + len > reader.known(client)) return refuse('incomplete', 'it deletes changes the document does not have');
    }
  }
  // Yjs orders concurrent inserts correctly only if an item's left neighbour comes before its
  // right one; otherwise two replicas that integrate in different orders disagree for good.
  const order = new ItemOrder(doc);
  for (const item of reader.textItems) {
    if (item.local) continue;
    if (!order.precedes(item.root, item.origin, item.rightOrigin)) return refuse('invalid', 'an item whose neighbours are out of order');
  }
  return { ok: true, trial: reader.textItems.filter((item) => item.local), writers: reader.writers() };
}

/**
 * After a trial integration on a copy: whether each item landed between its neighbours. Used
 * for items whose neighbours came in the same update, which only integration can place.
 */
export function checkTrialOrder(trial: Y.Doc, items: TextItem[]): UpdateCheck {
  const order = new ItemOrder(trial);
  for (const item of items) {
    if (!order.precedes(item.root, item.origin, item.id) || !order.precedes(item.root, item.id, item.rightOrigin)) {
      return refuse('invalid', 'an item whose neighbours are out of order');
    }
  }
  return { ok: true, trial: [] };
}

/** How far `ItemOrder` walks from a left neighbour before it asks the index instead. */
const shortWalkItems = 16;

/**
 * Answers "does the item holding `left` come before the one holding `right`" in a root text of
 * a doc that does not change meanwhile. Neighbours are nearly always a few items apart, so it
 * walks a few items first; past that it numbers the root's items once, in one walk, and answers
 * every later question from those numbers. However an update places its items (450 lines
 * inserted bottom first, an hour of offline typing with its corrections, or hostile neighbours
 * a whole document apart), checking it costs at most one walk of the document plus a few steps
 * and a lookup per item: never the n²/2 steps of a walk per item.
 */
export class ItemOrder {
  private readonly numbers = new Map<string, Map<Y.Item, number>>();
  /** Items walked so far, the numbering included (tests hold it to the bound above). */
  steps = 0;

  constructor(private readonly doc: Y.Doc) {}

  precedes(root: string, left: Y.ID | null, right: Y.ID | null): boolean {
    if (right === null) return true;
    let start: Y.Item | null = null;
    let struct: Y.Item | null;
    if (left === null) {
      struct = (this.doc.share.get(root) as Y.AbstractType<unknown> | undefined)?._start ?? null;
    } else {
      const found = Y.getItem(this.doc.store, left) as Y.Item | Y.GC;
      if (!(found instanceof Y.Item)) return true; // a GC'd neighbour: Yjs drops the item
      if (holds(found, right)) return right.clock > left.clock;
      start = found;
      struct = found.right;
    }
    for (let walked = 0; struct !== null && walked < shortWalkItems; struct = struct.right, walked++) {
      this.steps++;
      if (holds(struct, right)) return true;
    }
    if (struct === null) return false;
    const numbers = this.numbered(root);
    const target = Y.getItem(this.doc.store, right) as Y.Item | Y.GC;
    const to = target instanceof Y.Item ? numbers.get(target) : undefined;
    if (to === undefined) return false; // not in this root's list
    const from = start === null ? -1 : numbers.get(start);
    return from !== undefined && from < to;
  }

  private numbered(root: string): Map<Y.Item, number> {
    let numbers = this.numbers.get(root);
    if (numbers) return numbers;
    numbers = new Map();
    let index = 0;
    for (let struct = (this.doc.share.get(root) as Y.AbstractType<unknown> | undefined)?._start ?? null; struct !== null; struct = struct.right) {
      numbers.set(struct, index++);
    }
    this.steps += index;
    this.numbers.set(root, numbers);
    return numbers;
  }
}

const holds = (struct: Y.Item, id: Y.ID): boolean =>
  struct.id.client === id.client && struct.id.clock <= id.clock && id.clock < struct.id.clock + struct.length;

/**
 * Walks the update's structs in an order Yjs could integrate them (a struct once its own
 * client's earlier clocks and its origins are known), placing each one in a root type.
 */
class UpdatePlacer {
  /** The update's text items, for the order checks. */
  readonly textItems: TextItem[] = [];
  /** Structs of the update already placed, per client, in clock order. */
  private readonly placed = new Map<number, Placed[]>();
  private readonly knownClocks = new Map<number, number>();

  constructor(
    /** Where each client's structs in the update end. */
    private readonly ends: ReadonlyMap<number, number>,
    private readonly doc: Y.Doc,
    private readonly schema: DocSchema,
  ) {}

  /** Clocks of the update's own structs: past what the doc holds, up to where the update ends. */
  private readonly fresh: FreshClocks = (client, clock, length) =>
    clock >= Y.getState(this.doc.store, client) && clock + length <= (this.ends.get(client) ?? 0);

  /** The clients this update writes new structs for. */
  writers(): number[] {
    return [...this.placed.keys()];
  }

  known(client: number): number {
    return this.knownClocks.get(client) ?? Y.getState(this.doc.store, client);
  }

  /**
   * Places each client's structs in clock order, as far as their origins are known. A client
   * that waits on another's clock is woken when that client moves on, so each struct is looked
   * at a bounded number of times: linear in the update, however its clients interleave.
   */
  integrate(byClient: Map<number, Array<Y.Item | Y.GC | Y.Skip>>): UpdateCheck | null {
    const next = new Map<number, number>();
    const waiting = new Map<number, number[]>(); // client → clients waiting for it to move on
    const queue = [...byClient.keys()];
    while (queue.length > 0) {
      const client = queue.pop()!;
      const structs = byClient.get(client)!;
      let index = next.get(client) ?? 0;
      let blockedOn: number | null = null;
      for (; index < structs.length; index++) {
        const struct = structs[index]!;
        if (struct.id.clock > this.known(client)) break; // a gap: nothing in this update fills it
        if (struct instanceof Y.Skip) break; // the sender lacks what the skip stands for
        if (struct.id.clock + struct.length <= this.known(client)) continue; // known already
        if (struct instanceof Y.Item) {
          blockedOn = this.missing(struct);
          if (blockedOn !== null) break;
        }
        const failure = struct instanceof Y.Item ? this.place(struct) : this.record(struct, 'gc');
        if (failure) return failure;
      }
      const moved = index !== (next.get(client) ?? 0);
      next.set(client, index);
      if (blockedOn !== null && byClient.has(blockedOn)) {
        let list = waiting.get(blockedOn);
        if (!list) waiting.set(blockedOn, (list = []));
        list.push(client);
      }
      if (moved) {
        const woken = waiting.get(client);
        if (woken) {
          waiting.delete(client);
          queue.push(...woken);
        }
      }
    }
    for (const [client, structs] of byClient) {
      const rest = structs.slice(next.get(client) ?? 0).filter((s) => !(s instanceof Y.Skip));
      if (rest.length > 0) return refuse('incomplete', 'it depends on changes the document does not have');
    }
    return null;
  }

  /** The client whose clock an item's origins wait for, or null when they are all known. */
  private missing(item: Y.Item): number | null {
    for (const id of [item.origin, item.rightOrigin, item.parent instanceof Y.ID ? item.parent : null]) {
      if (id && id.clock >= this.known(id.client)) return id.client;
    }
    return null;
  }

  private place(item: Y.Item): UpdateCheck | null {
    let place: Place;
    if (item.parent instanceof Y.ID) return refuse('invalid', 'a nested type');
    if (typeof item.parent === 'string') {
      place = { root: item.parent, sub: item.parentSub };
    } else {
      const left = item.origin ? this.placeOf(item.origin) : null;
      const right = item.rightOrigin ? this.placeOf(item.rightOrigin) : null;
      if (left === 'gc' || right === 'gc') place = 'gc'; // Yjs turns it into a GC struct
      else if (left && right && (left.root !== right.root || left.sub !== right.sub)) {
        return refuse('invalid', 'its neighbours are in different types');
      } else if (left ?? right) place = (left ?? right)!;
      else return refuse('invalid', 'an item with no parent');
    }
    if (place !== 'gc') {
      const failure = this.fits(item, place);
      if (failure) return failure;
      // Part of it is known already: Yjs integrates the rest after the client's own previous
      // clock, wherever that is, so it must be in the same type (and key).
      const known = this.known(item.id.client);
      if (item.id.clock < known) {
        const before = this.placeOf(Y.createID(item.id.client, known - 1));
        if (before === 'gc' || before.root !== place.root || before.sub !== place.sub) return refuse('invalid', 'a resent item whose new part continues another type');
      }
      if (place.sub === null) this.noteText(item, place.root);
    }
    return this.record(item, place);
  }

  /** A text item as Yjs will integrate it: past the clocks already known, its origin the one before. */
  private noteText(item: Y.Item, root: string): void {
    const known = this.known(item.id.client);
    const trimmed = item.id.clock < known;
    const id = trimmed ? Y.createID(item.id.client, known) : item.id;
    const origin = trimmed ? Y.createID(item.id.client, known - 1) : item.origin;
    const inUpdate = (ref: Y.ID | null) => ref !== null && ref.clock >= Y.getState(this.doc.store, ref.client);
    this.textItems.push({ id, origin, rightOrigin: item.rightOrigin, root, local: inUpdate(origin) || inUpdate(item.rightOrigin) });
  }

  private fits(item: Y.Item, place: { root: string; sub: string | null }): UpdateCheck | null {
    const root = this.schema.roots.get(place.root);
    if (!root) return refuse('invalid', `a write outside the document's types ("${place.root.slice(0, 40)}")`);
    const content = item.content;
    if (content instanceof Y.ContentDeleted) return null;
    if (root.kind === 'text') {
      if (place.sub !== null) return refuse('invalid', 'a map entry in a text');
      return content instanceof Y.ContentString ? null : refuse('invalid', 'content that is not text in a text');
    }
    if (place.sub === null) return refuse('invalid', 'a list item in a map');
    if (item.rightOrigin !== null) return refuse('invalid', 'a map entry with a right neighbour');
    if (!(content instanceof Y.ContentAny) || content.arr.length !== 1) return refuse('invalid', 'a map entry that is not one plain value');
    return root.accepts(place.sub, content.arr[0], this.entryOf(place.root, place.sub), this.fresh) ? null : refuse('invalid', `a malformed "${place.root}" entry`);
  }

  /** The value a root map holds under `key` now, read without creating the root. */
  private entryOf(root: string, key: string): unknown {
    const type = this.doc.share.get(root) as (Y.AbstractType<unknown> & { _map: Map<string, Y.Item> }) | undefined;
    const item = type?._map.get(key);
    return item && !item.deleted ? item.content.getContent()[0] : undefined;
  }

  private record(struct: Y.Item | Y.GC, place: Place): null {
    const client = struct.id.client;
    let list = this.placed.get(client);
    if (!list) this.placed.set(client, (list = []));
    const end = struct.id.clock + struct.length;
    list.push({ clock: struct.id.clock, end, place });
    this.knownClocks.set(client, end);
    return null;
  }

  /** The place of an id that `missing` found known: in the document, or placed from this update. */
  private placeOf(id: Y.ID): Place {
    if (id.clock < Y.getState(this.doc.store, id.client)) {
      const struct = Y.getItem(this.doc.store, id) as Y.Item | Y.GC;
      if (!(struct instanceof Y.Item)) return 'gc';
      const parent = struct.parent as Y.AbstractType<unknown> | null;
      if (!parent || parent._item !== null) return 'gc';
      return { root: Y.findRootTypeKey(parent), sub: struct.parentSub };
    }
    const list = this.placed.get(id.client) ?? [];
    let low = 0;
    let high = list.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const entry = list[mid]!;
      if (id.clock < entry.clock) high = mid - 1;
      else if (id.clock >= entry.end) low = mid + 1;
      else return entry.place;
    }
    return 'gc'; // unreachable for a ready struct; a GC place makes Yjs drop it, which is safe
  }
}

/** A file's doc: its text, and the change set's hunk records (any editor reviews them). */
export const FILE_DOC_SCHEMA: DocSchema = {
  roots: new Map<string, RootSchema>([
    [FILE_TEXT_KEY, { kind: 'text' }],
    [HUNKS_KEY, { kind: 'map', accepts: (_key, value) => isHunkRecord(value) }],
  ]),
};

/**
 * A file's doc as participants may write it: a hunk record is the agent's (the gateway writes it
 * with the turn); a reviewer changes its status and, rejecting, the bookkeeping of the hunks
 * around it — never which turn and which of the agent's characters it is. A record a participant
 * invents (naming another person's characters as the agent's) would make a reject delete them.
 * (The rest may change under a reviewer whose copy lags a streaming turn, so it is not pinned.)
 */
export const FILE_DOC_PARTICIPANT_SCHEMA: DocSchema = {
  roots: new Map<string, RootSchema>([
    [FILE_TEXT_KEY, { kind: 'text' }],
    [HUNKS_KEY, { kind: 'map', accepts: (_key, value, existing, fresh) => isHunkRecord(value) && isHunkRecord(existing) && sameHunk(existing, value, fresh) }],
  ]),
};

/**
 * What a reviewer's update may change in a hunk record. `restored` (text a reject put back,
 * which a later reject of this hunk deletes) and `removed` (the characters a reject puts back)
 * change only with characters that same update writes: a reject's re-inserted text. Anything
 * else already in the doc — someone's typing, text they deleted — could be named there to have
 * a later reject delete or resurrect it. Either may also go back to what it was (an undo).
 */
function sameHunk(before: HunkRecord, after: HunkRecord, fresh: FreshClocks): boolean {
  if (before.turnId !== after.turnId || before.agentClient !== after.agentClient || before.insertedFrom !== after.insertedFrom) return false;
  if (before.original !== after.original) return false;
  return onlyFreshAdded(before.restored ?? [], after.restored ?? [], fresh) && onlyFreshAdded(before.removed ?? [], after.removed ?? [], fresh);
}

/** Every character of `now` is one `was` had, or one the update writes. */
function onlyFreshAdded(was: readonly IdRun[], now: readonly IdRun[], fresh: FreshClocks): boolean {
  if (JSON.stringify(was) === JSON.stringify(now)) return true;
  const had = new Set<string>();
  for (const run of was) for (let i = 0; i < run.length; i++) had.add(`${run.client}:${run.clock + i}`);
  return now.every((run) => fresh(run.client, run.clock, run.length) || Array.from({ length: run.length }, (_, i) => had.has(`${run.client}:${run.clock + i}`)).every(Boolean));
}

/** The index: only the gateway writes it, so this only guards what is loaded back. */
export const INDEX_DOC_SCHEMA: DocSchema = {
  roots: new Map<string, RootSchema>([[INDEX_ENTRIES_KEY, { kind: 'map', accepts: (_key, value) => isIndexEntry(value) }]]),
};

function isIndexEntry(value: unknown): boolean {
  const entry = value as { kind?: unknown; fileId?: unknown } | null;
  if (typeof entry !== 'object' || entry === null) return false;
  return entry.kind === 'folder' || (entry.kind === 'file' && typeof entry.fileId === 'string');
}
