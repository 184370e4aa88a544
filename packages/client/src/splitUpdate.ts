import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';

type Struct = Y.Item | Y.GC;

/**
 * Splits a Yjs update into updates of at most `maxBytes` each that, applied in order, give
 * exactly what the whole one gives — so a big paste or the catch-up of an hour offline never
 * meets the gateway's frame limit (DESIGN §11.1: too big → the client splits, nothing dropped).
 *
 * Each piece carries structs in an order Yjs can integrate them (a struct after the ones of the
 * update its neighbours name), a text item too long for one piece is cut in two as Yjs itself
 * would (the right part's origin is the left part's last character), and the deletions go with
 * the last piece. Linear in the update.
 *
 * @example
 * for (const piece of splitUpdate(update, limits.maxFrameBytes - 64)) send(piece);
 */
export function splitUpdate(update: Uint8Array, maxBytes: number): Uint8Array[] {
  if (update.byteLength <= maxBytes) return [update];
  const { structs, ds } = Y.decodeUpdate(update);
  const ordered = integrationOrder(structs.filter((s): s is Struct => !(s instanceof Y.Skip)));
  // Room for a piece's headers (client count, per-client header, the empty delete set).
  const budget = Math.max(64, maxBytes - 64);
  const maxChars = Math.max(1, Math.floor((budget - 64) / 3)); // UTF-8: at most 3 bytes per UTF-16 unit
  const pieces: Uint8Array[] = [];
  let current: Struct[] = [];
  let currentBytes = 0;
  for (const whole of ordered) {
    for (const struct of cut(whole, maxChars)) {
      const bytes = encodedSize(struct);
      if (current.length > 0 && currentBytes + bytes > budget) {
        pieces.push(encodePiece(current, null));
        current = [];
        currentBytes = 0;
      }
      current.push(struct);
      currentBytes += bytes + 8; // a client header, at worst
    }
  }
  const deletions = encodeDeleteSet(ds);
  if (current.length > 0 && currentBytes + deletions.byteLength > budget) {
    pieces.push(encodePiece(current, null));
    current = [];
  }
  pieces.push(encodePiece(current, ds));
  return pieces;
}

/**
 * The structs in an order Yjs can integrate them: each client's in clock order, a struct only
 * after the structs of this update that its origins name. A dependency outside the update is
 * taken as known (the gateway has it, or will say what it lacks). A worklist wakes a client when
 * the one it waits for moves on, so each struct is looked at a bounded number of times.
 */
function integrationOrder(structs: Struct[]): Struct[] {
  const byClient = new Map<number, Struct[]>();
  for (const struct of structs) {
    let list = byClient.get(struct.id.client);
    if (!list) byClient.set(struct.id.client, (list = []));
    list.push(struct);
  }
  const first = new Map<number, number>();
  for (const [client, list] of byClient) first.set(client, list[0]!.id.clock);
  const emittedEnd = new Map<number, number>();
  const known = (id: Y.ID | null): boolean => {
    if (id === null) return true;
    const start = first.get(id.client);
    return start === undefined || id.clock < start || id.clock < (emittedEnd.get(id.client) ?? start);
  };
  const waitingFor = (struct: Struct): number | null => {
    if (!(struct instanceof Y.Item)) return null;
    for (const id of [struct.origin, struct.rightOrigin, struct.parent instanceof Y.ID ? struct.parent : null]) {
      if (!known(id)) return id!.client;
    }
    return null;
  };
  const out: Struct[] = [];
  const next = new Map<number, number>();
  const waiting = new Map<number, number[]>();
  const queue = [...byClient.keys()];
  while (queue.length > 0) {
    const client = queue.pop()!;
    const list = byClient.get(client)!;
    const from = next.get(client) ?? 0;
    let index = from;
    let blockedOn: number | null = null;
    for (; index < list.length; index++) {
      blockedOn = waitingFor(list[index]!);
      if (blockedOn !== null) break;
      out.push(list[index]!);
      emittedEnd.set(client, list[index]!.id.clock + list[index]!.length);
    }
    next.set(client, index);
    if (blockedOn !== null && blockedOn !== client) {
      let list = waiting.get(blockedOn);
      if (!list) waiting.set(blockedOn, (list = []));
      list.push(client);
    }
    if (index > from) {
      const woken = waiting.get(client);
      if (woken) {
        waiting.delete(client);
        queue.push(...woken);
      }
    }
  }
  // What never became ready (an update that depends on itself in a circle) goes last, as it came.
  for (const [client, list] of byClient) out.push(...list.slice(next.get(client) ?? 0));
  return out;
}

/** A text item longer than `maxChars`, cut as Yjs cuts items (never inside a surrogate pair). */
function cut(struct: Struct, maxChars: number): Struct[] {
  if (!(struct instanceof Y.Item) || !(struct.content instanceof Y.ContentString) || struct.length <= maxChars) return [struct];
  const parts: Struct[] = [];
  const text = struct.content.str;
  let origin = struct.origin;
  for (let offset = 0; offset < text.length; ) {
    let end = Math.min(text.length, offset + maxChars);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += end - 1 > offset ? -1 : 1; // keep the pair together
    const id = Y.createID(struct.id.client, struct.id.clock + offset);
    const parent = offset === 0 ? struct.parent : null;
    parts.push(new Y.Item(id, null, origin, null, struct.rightOrigin, parent, struct.parentSub, new Y.ContentString(text.slice(offset, end))));
    origin = Y.createID(struct.id.client, struct.id.clock + end - 1);
    offset = end;
  }
  return parts;
}

function encodedSize(struct: Struct): number {
  const encoder = new Y.UpdateEncoderV1();
  struct.write(encoder, 0);
  return encoder.toUint8Array().byteLength;
}

/** An update in Yjs's v1 format: per client, its structs from a start clock (gaps as skips). */
function encodePiece(structs: Struct[], ds: { clients: Map<number, Array<{ clock: number; len: number }>> } | null): Uint8Array {
  const byClient = new Map<number, Struct[]>();
  for (const struct of structs) {
    let list = byClient.get(struct.id.client);
    if (!list) byClient.set(struct.id.client, (list = []));
    list.push(struct);
  }
  const encoder = new Y.UpdateEncoderV1();
  encoding.writeVarUint(encoder.restEncoder, byClient.size);
  for (const [client, list] of byClient) {
    list.sort((a, b) => a.id.clock - b.id.clock);
    const written: Array<Struct | Y.Skip> = [];
    for (const struct of list) {
      const previous = written[written.length - 1];
      const end = previous ? previous.id.clock + previous.length : struct.id.clock;
      if (struct.id.clock > end) written.push(new Y.Skip(Y.createID(client, end), struct.id.clock - end));
      written.push(struct);
    }
    encoding.writeVarUint(encoder.restEncoder, written.length);
    encoder.writeClient(client);
    encoding.writeVarUint(encoder.restEncoder, written[0]!.id.clock);
    for (const struct of written) struct.write(encoder, 0);
  }
  writeDeleteSet(encoder, ds);
  return encoder.toUint8Array();
}

function encodeDeleteSet(ds: { clients: Map<number, Array<{ clock: number; len: number }>> }): Uint8Array {
  const encoder = new Y.UpdateEncoderV1();
  writeDeleteSet(encoder, ds);
  return encoder.toUint8Array();
}

function writeDeleteSet(encoder: Y.UpdateEncoderV1, ds: { clients: Map<number, Array<{ clock: number; len: number }>> } | null): void {
  const clients = ds ? [...ds.clients].filter(([, ranges]) => ranges.length > 0) : [];
  encoding.writeVarUint(encoder.restEncoder, clients.length);
  for (const [client, ranges] of clients) {
    encoder.resetDsCurVal();
    encoding.writeVarUint(encoder.restEncoder, client);
    encoding.writeVarUint(encoder.restEncoder, ranges.length);
    for (const { clock, len } of ranges) {
      encoder.writeDsClock(clock);
      encoder.writeDsLen(len);
    }
  }
}
