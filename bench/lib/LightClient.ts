/**
 * A load-generating Flint session over a real WebSocket that speaks the wire protocol directly
 * (SPEC: hello, sync step 1, agent.prompt) but, once a file is synced, only timestamps the
 * updates it receives instead of applying them. Hundreds of full clients (a Y.Doc each) would
 * make the load generator, not the gateway, the bottleneck on a 2-core machine; one real
 * FlintClient per run checks that what the gateway sends is correct.
 */
import {
  Channel,
  decodeServerFrame,
  encodeControl,
  FILE_TEXT_KEY,
  INDEX_DOC_ID,
  INDEX_ENTRIES_KEY,
  isDecodeError,
  PROTOCOL_VERSION,
  startDocFrame,
  type IndexEntry,
  type ServerMessage,
  type TurnInfo,
} from '@flint/protocol';
import { toBase64 } from 'lib0/buffer';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import * as syncProtocol from 'y-protocols/sync';
import { WebSocket } from 'ws';
import * as Y from 'yjs';

type Result = Extract<ServerMessage, { type: 'result' }>;

export class LightClient {
  private readonly docs = new Map<string, Y.Doc>();
  private readonly synced = new Set<string>();
  private readonly waiters = new Set<() => void>();
  private readonly pending = new Map<number, (result: Result) => void>();
  private nextRequestId = 1;
  /** Arrival times (performance.now) of document updates, per doc, while `recording`. */
  readonly updateTimes = new Map<string, number[]>();
  readonly turns = new Map<string, TurnInfo>();
  /** When each turn was first seen done (performance.now). */
  readonly turnEndedAt = new Map<string, number>();
  recording = false;
  framesIn = 0;
  bytesIn = 0;

  private constructor(private readonly ws: WebSocket) {
    ws.binaryType = 'nodebuffer';
    ws.on('message', (data: Buffer) => this.receive(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)));
  }

  static async connect(url: string, workspaceId: string, token: string): Promise<LightClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const client = new LightClient(ws);
    let welcomed = false;
    client.onControl = (message) => {
      if (message.type === 'welcome') welcomed = true;
    };
    ws.send(encodeControl({ type: 'hello', protocolVersion: PROTOCOL_VERSION, workspaceId, token }));
    await client.when(() => welcomed, 'welcome');
    client.onControl = null;
    await client.sync(INDEX_DOC_ID);
    return client;
  }

  private onControl: ((message: ServerMessage) => void) | null = null;

  /** The file id at `path`, from the synced index. */
  fileId(path: string): string {
    const entry = this.docs.get(INDEX_DOC_ID)!.getMap<IndexEntry>(INDEX_ENTRIES_KEY).get(path);
    if (entry?.kind !== 'file') throw new Error(`no file at ${path}`);
    return entry.fileId;
  }

  /** Subscribes to a doc (sync step 1 with an empty state) and applies the gateway's answer once. */
  async sync(docId: string): Promise<Y.Doc> {
    const doc = new Y.Doc();
    this.docs.set(docId, doc);
    const step1 = startDocFrame(Channel.Sync, docId);
    syncProtocol.writeSyncStep1(step1, doc);
    this.ws.send(encoding.toUint8Array(step1));
    await this.when(() => this.synced.has(docId), `sync of ${docId}`);
    return doc;
  }

  /** Asks the agent to rewrite [anchor, head) of a synced file (equal: that line). */
  prompt(fileId: string, anchor: number, head: number, instruction = 'write the function'): Promise<Result> {
    const text = this.docs.get(fileId)!.getText(FILE_TEXT_KEY);
    const encode = (index: number) => toBase64(Y.encodeRelativePosition(Y.createRelativePositionFromTypeIndex(text, index)));
    const requestId = this.nextRequestId++;
    return new Promise((resolve) => {
      this.pending.set(requestId, resolve);
      this.ws.send(encodeControl({ type: 'agent.prompt', requestId, fileId, anchor: encode(anchor), head: encode(head), instruction, route: 'fast' }));
    });
  }

  whenTurnEnds(turnId: string, timeoutMs = 120_000): Promise<TurnInfo> {
    return this.when(() => this.turnEndedAt.has(turnId), `turn ${turnId} to end`, timeoutMs).then(() => this.turns.get(turnId)!);
  }

  close(): void {
    this.ws.terminate();
  }

  private when(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`LightClient: timed out waiting for ${what}`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  private receive(bytes: Uint8Array): void {
    const now = performance.now();
    this.framesIn++;
    this.bytesIn += bytes.byteLength;
    const frame = decodeServerFrame(bytes);
    if (isDecodeError(frame)) throw new Error(`gateway sent an undecodable frame: ${frame.error}`);
    if (frame.channel === Channel.Control) this.control(frame.message, now);
    else if (frame.channel === Channel.Sync) this.syncFrame(frame.docId, frame.payload, now);
    for (const check of [...this.waiters]) check();
  }

  private control(message: ServerMessage, now: number): void {
    this.onControl?.(message);
    if (message.type === 'result') {
      this.pending.get(message.requestId)?.(message);
      this.pending.delete(message.requestId);
    } else if (message.type === 'agent.turn') {
      this.turns.set(message.turn.turnId, message.turn);
      if (message.turn.status !== 'streaming' && !this.turnEndedAt.has(message.turn.turnId)) this.turnEndedAt.set(message.turn.turnId, now);
    }
  }

  private syncFrame(docId: string, payload: Uint8Array, now: number): void {
    const decoder = decoding.createDecoder(payload);
    const type = decoding.readVarUint(decoder);
    const doc = this.docs.get(docId);
    if (type === syncProtocol.messageYjsSyncStep2 && doc && !this.synced.has(docId)) {
      Y.applyUpdate(doc, decoding.readVarUint8Array(decoder));
      this.synced.add(docId);
    } else if (type === syncProtocol.messageYjsUpdate) {
      if (docId === INDEX_DOC_ID && doc) Y.applyUpdate(doc, decoding.readVarUint8Array(decoder));
      if (!this.recording) return;
      let times = this.updateTimes.get(docId);
      if (!times) this.updateTimes.set(docId, (times = []));
      times.push(now);
    }
  }
}
