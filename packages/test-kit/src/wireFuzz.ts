/**
 * Frames a hostile participant could send: random bytes, truncated and bit-flipped frames,
 * control messages with wrong fields, and — what found the worst bugs — valid Yjs and awareness
 * updates mutated at the byte and at the struct level. Seeded: a failure replays from its seed.
 */
import { Channel, encodeControl, encodeDocFrame, FILE_TEXT_KEY, INDEX_DOC_ID } from '@flint/protocol';
import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';

export type Random = () => number;

export const int = (random: Random, max: number): number => Math.floor(random() * max);
export const pick = <T>(random: Random, items: readonly T[]): T => items[int(random, items.length)] as T;

/** A target the attacker knows: a doc id and its own copy of the doc, kept in step with the gateway's. */
export interface FuzzTarget {
  docId: string;
  doc: Y.Doc;
}

const weirdStrings = ['', 'a', '..', '../../etc/passwd', 'a/b.ts', '\u0000', '\ud800', 'e\u0301', '\u202eevil', 'x'.repeat(300), '🙂', '%2e%2e', 'honest.ts', 'f/g.ts'];

export function randomString(random: Random): string {
  if (random() < 0.5) return pick(random, weirdStrings);
  const length = int(random, 24);
  let out = '';
  for (let i = 0; i < length; i++) out += String.fromCharCode(random() < 0.8 ? 32 + int(random, 95) : int(random, 0x10000));
  return out;
}

function randomJson(random: Random, depth = 0): unknown {
  switch (int(random, depth > 2 ? 5 : 7)) {
    case 0: return null;
    case 1: return random() < 0.5;
    case 2: return pick(random, [0, -1, 1e308, 2 ** 53 + 7, 0.5, NaN]);
    case 3: return randomString(random);
    case 4: return undefined;
    case 5: return Array.from({ length: int(random, 4) }, () => randomJson(random, depth + 1));
    default: {
      const out: Record<string, unknown> = {};
      for (let i = int(random, 4); i > 0; i--) out[pick(random, ['type', 'user', 'selection', 'anchor', 'item', 'client', 'clock', 'name', randomString(random)])] = randomJson(random, depth + 1);
      return out;
    }
  }
}

/** Flips bits, replaces, inserts, deletes, duplicates or cuts bytes. */
export function mutateBytes(random: Random, bytes: Uint8Array): Uint8Array {
  const out = [...bytes];
  for (let n = 1 + int(random, 3); n > 0; n--) {
    const at = out.length === 0 ? 0 : int(random, out.length);
    switch (int(random, 6)) {
      case 0: if (out.length > 0) out[at] = (out[at] as number) ^ (1 << int(random, 8)); break;
      case 1: if (out.length > 0) out[at] = int(random, 256); break;
      case 2: out.splice(at, 0, int(random, 256)); break;
      case 3: out.splice(at, 1 + int(random, 4)); break;
      case 4: out.splice(at, 0, ...out.slice(at, at + 1 + int(random, 16))); break;
      default: out.length = at; break;
    }
  }
  return Uint8Array.from(out);
}

/**
 * A valid update of `target`: what a collaborator typing would send, made in the attacker's
 * own copy under its current client id (the copy keeps what was refused: later edits build on
 * it, as a client out of step would).
 */
export function validUpdate(random: Random, target: FuzzTarget): Uint8Array {
  let update: Uint8Array | null = null;
  const capture = (u: Uint8Array) => (update = u);
  target.doc.once('update', capture);
  const text = target.doc.getText(FILE_TEXT_KEY);
  const at = int(random, text.length + 1);
  if (random() < 0.3 && text.length > 0) text.delete(Math.min(at, text.length - 1), 1 + int(random, 5));
  else text.insert(at, randomString(random).slice(0, 12) || 'x');
  target.doc.off('update', capture);
  return update ?? new Uint8Array([0, 0]);
}

/**
 * Decodes an update, changes one struct (its id, origins, parent, key or content), and encodes
 * it again with Yjs's own struct writers: well-formed bytes that say something wrong.
 */
export function mutateStructs(random: Random, update: Uint8Array): Uint8Array {
  const { structs, ds } = Y.decodeUpdate(update);
  const items = structs.filter((s): s is Y.Item => s instanceof Y.Item);
  const item = items.length > 0 ? pick(random, items) : null;
  if (item) {
    const someId = () => Y.createID(random() < 0.5 ? item.id.client : int(random, 2 ** 31), int(random, 200));
    switch (int(random, 9)) {
      case 0: item.id = Y.createID(item.id.client, item.id.clock + int(random, 50) - 10 < 0 ? 0 : item.id.clock + int(random, 50) - 10); break;
      case 1: item.origin = someId(); break;
      case 2: item.rightOrigin = someId(); break;
      case 3: item.origin = null; item.rightOrigin = null; setParent(item, pick(random, [FILE_TEXT_KEY, 'flint.hunks', 'evil', ''])); break;
      case 4: item.origin = null; item.rightOrigin = null; item.parent = someId(); break;
      case 5: item.parentSub = randomString(random); item.origin = null; item.rightOrigin = null; setParent(item, pick(random, [FILE_TEXT_KEY, 'flint.hunks'])); break;
      case 6: item.content = new Y.ContentAny([randomJson(random)]); break;
      case 7: item.content = pick(random, [new Y.ContentEmbed({ x: 1 }), new Y.ContentFormat('bold', true), new Y.ContentDeleted(1 + int(random, 9)), new Y.ContentType(new Y.Text()), new Y.ContentBinary(new Uint8Array(3))]); break;
      default: item.id = Y.createID(int(random, 2 ** 31), int(random, 100)); break;
    }
  }
  return encodeStructs(structs, ds, random);
}

/** Encodes decoded structs and a delete set again, as `Y.decodeUpdate` gave them (changed or not). */
export function encodeDecodedUpdate({ structs, ds }: ReturnType<typeof Y.decodeUpdate>): Uint8Array {
  return encodeStructs(structs, ds, () => 0.5);
}

/** A decoded item names a root type by its key, which Yjs's types do not declare. */
function setParent(item: Y.Item, rootKey: string): void {
  (item as unknown as { parent: string }).parent = rootKey;
}

function encodeStructs(structs: Array<Y.Item | Y.GC | Y.Skip>, ds: ReturnType<typeof Y.decodeUpdate>['ds'], random: Random): Uint8Array {
  const encoder = new Y.UpdateEncoderV1();
  const byClient = new Map<number, Array<Y.Item | Y.GC | Y.Skip>>();
  for (const s of structs) {
    const list = byClient.get(s.id.client) ?? [];
    list.push(s);
    byClient.set(s.id.client, list);
  }
  encoding.writeVarUint(encoder.restEncoder, byClient.size);
  for (const [client, list] of byClient) {
    encoding.writeVarUint(encoder.restEncoder, list.length);
    encoder.writeClient(client);
    encoding.writeVarUint(encoder.restEncoder, list[0]!.id.clock);
    for (const s of list) {
      try {
        s.write(encoder, 0);
      } catch {
        encoder.writeInfo(0); // a struct Yjs will not write: a GC of the same length instead
        encoder.writeLen(s.length);
      }
    }
  }
  encoding.writeVarUint(encoder.restEncoder, ds.clients.size + (random() < 0.1 ? 1 : 0));
  for (const [client, ranges] of ds.clients) {
    encoding.writeVarUint(encoder.restEncoder, client);
    encoding.writeVarUint(encoder.restEncoder, ranges.length);
    for (const r of ranges) {
      encoder.writeDsClock(r.clock);
      encoding.writeVarUint(encoder.restEncoder, random() < 0.05 ? 0 : r.len);
    }
  }
  return encoder.toUint8Array();
}

/** A valid awareness update, or one with states no honest client sends. */
export function awarenessPayload(random: Random, ownClient: number): Uint8Array {
  const encoder = encoding.createEncoder();
  const entries = random() < 0.05 ? 1 + int(random, 300) : 1;
  encoding.writeVarUint(encoder, entries);
  for (let i = 0; i < entries; i++) {
    encoding.writeVarUint(encoder, random() < 0.7 ? ownClient : int(random, 2 ** 31));
    encoding.writeVarUint(encoder, int(random, 1000));
    const state = pick(random, [
      () => JSON.stringify({ user: { id: 'tab', name: 'Fuzz', color: '#123456' }, selection: null }),
      () => JSON.stringify({ user: { name: pick(random, ['Alice', 'gpt (AI)', randomString(random)]), agent: true, color: randomString(random) } }),
      () => JSON.stringify({ selection: { anchor: randomJson(random), head: { item: { client: 1, clock: 'x' } } } }),
      () => JSON.stringify(randomJson(random)) ?? 'undefined',
      () => '{"user": oops',
      () => 'null',
      () => JSON.stringify({ pad: 'x'.repeat(int(random, 6000)) }),
    ])();
    encoding.writeVarString(encoder, state);
  }
  return encoding.toUint8Array(encoder);
}

function syncPayload(random: Random, type: number, body: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, type);
  encoding.writeVarUint8Array(encoder, body);
  return encoding.toUint8Array(encoder);
}

function controlMessage(random: Random, targets: readonly FuzzTarget[]): Record<string, unknown> {
  const docId = pick(random, [...targets.map((t) => t.docId), INDEX_DOC_ID, randomString(random)]);
  const requestId = int(random, 5) === 0 ? randomJson(random) : int(random, 1e6);
  const base64 = () => (random() < 0.5 ? 'AAAA' : Buffer.from(mutateBytes(random, new Uint8Array([1, 2, 3, 4]))).toString('base64'));
  const path = () => (random() < 0.5 ? `f/${randomString(random)}` : randomString(random).replace(/^honest\.ts$/, 'f/h'));
  const messages: Array<() => Record<string, unknown>> = [
    () => ({ type: 'ping', sentAt: randomJson(random) }),
    () => ({ type: 'hello', protocolVersion: 1, workspaceId: 'w', token: 't' }),
    () => ({ type: 'doc.close', docId }),
    () => ({ type: 'file.create', requestId, path: path(), kind: pick(random, ['file', 'folder', 'x']) }),
    () => ({ type: 'file.rename', requestId, from: `f/${randomString(random)}`, to: path() }),
    () => ({ type: 'file.delete', requestId, path: `f/${randomString(random)}` }),
    () => ({ type: 'agent.prompt', requestId, fileId: docId, anchor: base64(), head: base64(), instruction: randomString(random), route: pick(random, ['fast', 'deep', 'x']) }),
    () => ({ type: 'agent.cancel', requestId, turnId: randomString(random) }),
    () => ({ type: 'agent.steer', requestId, turnId: randomString(random), instruction: 'x' }),
    () => ({ type: 'complete.request', requestId, fileId: docId, position: base64(), openFileIds: [docId] }),
    () => ({ type: 'complete.cancel', requestId }),
    () => ({ type: 'complete.feedback', requestId, outcome: pick(random, ['shown', 'accepted', 'x']), latencyMs: randomJson(random) }),
    () => ({ type: randomString(random) }),
  ];
  return pick(random, messages)();
}

/** One frame from a session that said hello and opened `targets`. */
export function hostileFrame(random: Random, targets: readonly FuzzTarget[]): Uint8Array {
  const target = pick(random, targets);
  const roll = random();
  if (roll < 0.04) return Uint8Array.from({ length: int(random, 64) }, () => int(random, 256));
  if (roll < 0.14) {
    const message = controlMessage(random, targets);
    const frame = encodeControl(message as never);
    return random() < 0.3 ? mutateBytes(random, frame) : frame;
  }
  if (roll < 0.3) {
    const payload = awarenessPayload(random, target.doc.clientID);
    const frame = encodeDocFrame(Channel.Awareness, pick(random, [target.docId, target.docId, INDEX_DOC_ID]), payload);
    return random() < 0.25 ? mutateBytes(random, frame) : frame;
  }
  if (roll < 0.36) {
    const sv = random() < 0.5 ? Y.encodeStateVector(target.doc) : mutateBytes(random, Y.encodeStateVector(target.doc));
    return encodeDocFrame(Channel.Sync, target.docId, syncPayload(random, 0, sv));
  }
  const update = validUpdate(random, target);
  const kind = random();
  const body = kind < 0.3 ? update : kind < 0.6 ? mutateBytes(random, update) : mutateStructs(random, update);
  const frame = encodeDocFrame(Channel.Sync, target.docId, syncPayload(random, random() < 0.8 ? 2 : 1, body));
  return random() < 0.05 ? mutateBytes(random, frame) : frame;
}
