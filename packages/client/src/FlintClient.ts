import { reviewHunks, type ReviewAction } from '@flint/change-set';
import {
  canWrite,
  Channel,
  CloseCode,
  decodeServerFrame,
  describeClose,
  encodeControl,
  encodeDocFrame,
  FILE_TEXT_KEY,
  INDEX_DOC_ID,
  isDecodeError,
  PROTOCOL_VERSION,
  shouldReconnect,
  startDocFrame,
  THREAD_DOC_ID,
  type AgentRequest,
  type AgentRoute,
  type CompletionOutcome,
  type FileOp,
  type RequestErrorCode,
  type SearchAnswer,
  type SearchQuery,
  type SearchRequest,
  type TerminalMessage,
  type TerminalRequest,
  type Role,
  type ServerMessage,
  type ThreadContext,
  type ThreadFileOpReview,
  type ThreadRequest,
  type TurnInfo,
} from '@flint/protocol';
import { toBase64 } from 'lib0/buffer';
import * as Y from 'yjs';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import * as awarenessProtocol from 'y-protocols/awareness';
import * as syncProtocol from 'y-protocols/sync';
import { CompletionChannel, failure, type CompletionResult, type CompletionStream } from './completion/CompletionChannel';
import { splitUpdate } from './splitUpdate';
import { DocHandle } from './DocHandle';
import { applyRemoteAwareness, type RemoteFault } from './remoteChanges';
import { defaultTimers, OPEN, type Timers, type WebSocketLike } from './WebSocketLike';

export type ConnectionStatus =
  | { kind: 'connecting'; attempt: number }
  | { kind: 'open'; role: Role; sessionId: string; workspaceName: string; gateway?: string }
  /** Closed for good: the gateway refused this link. `message` is for the user. */
  | { kind: 'closed'; code: number; message: string };

export type RequestResult =
  | { ok: true; turnId?: string; termId?: string; answer?: SearchAnswer }
  | { ok: false; code: RequestErrorCode | 'disconnected'; message: string; retryAfterMs?: number };

export interface FlintClientOptions {
  url: string;
  workspaceId: string;
  token: string;
  createSocket: (url: string) => WebSocketLike;
  timers?: Timers;
  pingIntervalMs?: number;
  /** Reconnect delays grow from `minBackoffMs` to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /**
   * Batches what other people (and the agent) change: a document's updates and cursor moves
   * that arrive before `schedule` calls back are applied together, the updates in one
   * transaction, so an editor bound to the doc makes one edit per batch instead of one per
   * message. The browser's scheduler applies a lone update at once and a stream of them once per
   * animation frame (the agent sends ~125 updates a second; a screen shows 60). Anything else the gateway sends (sync replies, control messages) first
   * applies what is waiting, so it never overtakes an update. None: each applies on arrival.
   */
  scheduleRemoteApply?: (apply: () => void) => void;
}

/** A remote change waiting for its batch: a Yjs update or an awareness update. */
interface QueuedRemote {
  channel: typeof Channel.Sync | typeof Channel.Awareness;
  payload: Uint8Array;
}

type Listener<T> = (value: T) => void;

/** Awareness changes the client made itself; anything else came from the gateway. */
const LOCAL = 'local';
/** The origin of review transactions, for undo managers to track. */
export const REVIEW_ORIGIN = Symbol('flint-review');

/** Docs synced per batch after a reconnect, and the pause between batches (~240 frames/s). */
const resyncBatchDocs = 40;
const resyncBatchDelayMs = 500;

/**
 * One persistent connection to a workspace: every open document's sync and awareness, file
 * operations, and round-trip time, over one WebSocket that reconnects with backoff and resumes
 * by state vectors (SPEC §Sync).
 * @example
 * const client = new FlintClient({ url, workspaceId, token, createSocket: (u) => new WebSocket(u) });
 * const file = client.openDoc(fileId);
 * await file.whenSynced();
 * file.doc.getText('content').insert(0, '// hi\n');
 */
export class FlintClient {
  readonly index: DocHandle;
  status: ConnectionStatus = { kind: 'connecting', attempt: 0 };
  rttMs: number | null = null;
  private socket: WebSocketLike | null = null;
  private readonly docs = new Map<string, DocHandle>();
  private readonly detach = new Map<string, () => void>();
  private readonly pending = new Map<number, (result: RequestResult) => void>();
  private readonly statusListeners = new Set<Listener<ConnectionStatus>>();
  private readonly rttListeners = new Set<Listener<number>>();
  private readonly missingListeners = new Set<Listener<string>>();
  private readonly turnListeners = new Set<Listener<TurnInfo>>();
  private readonly terminalListeners = new Set<Listener<TerminalMessage>>();
  private readonly faultListeners = new Set<Listener<RemoteFault>>();
  /** How many relayed frames this client could not apply (`onFault`). */
  faultCount = 0;
  /** The agent's turns this session has heard of, latest state each. */
  readonly turns = new Map<string, TurnInfo>();
  private readonly timers: Timers;
  private nextRequestId = 1;
  /** Which welcome the batched resync belongs to: a later one ends an earlier one's. */
  private syncRound = 0;
  /** The gateway's frame limit (`welcome`): updates larger than it go in pieces (`splitUpdate`). */
  private maxFrameBytes = 1024 * 1024;
  private readonly completions = new CompletionChannel(
    (message) => {
      if (this.socket?.readyState !== OPEN || this.status.kind !== 'open') return false;
      this.send(encodeControl(message));
      return true;
    },
    () => this.nextRequestId++,
  );
  private readonly queued = new Map<DocHandle, QueuedRemote[]>();
  private applyScheduled = false;
  private attempt = 0;
  private reconnectTimer: unknown = null;
  private pingTimer: unknown = null;
  private destroyed = false;

  constructor(private readonly options: FlintClientOptions) {
    this.timers = options.timers ?? defaultTimers;
    this.index = this.openDoc(INDEX_DOC_ID);
    this.connect();
  }

  get role(): Role | null {
    return this.status.kind === 'open' ? this.status.role : null;
  }

  onStatus(listener: Listener<ConnectionStatus>): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  onRtt(listener: Listener<number>): () => void {
    this.rttListeners.add(listener);
    return () => this.rttListeners.delete(listener);
  }

  /** Called with a doc id the gateway says does not exist (e.g. a file someone deleted). */
  onDocMissing(listener: Listener<string>): () => void {
    this.missingListeners.add(listener);
    return () => this.missingListeners.delete(listener);
  }

  /** Shared terminals' state and output (`term.*`, SPEC [P40]–[P46]). */
  onTerminal(listener: Listener<TerminalMessage>): () => void {
    this.terminalListeners.add(listener);
    return () => this.terminalListeners.delete(listener);
  }

  /** Terminal messages that get no answer (watch, keystrokes, resize); dropped while disconnected. */
  sendTerminal(message: Extract<TerminalRequest, { type: 'term.watch' | 'term.input' | 'term.resize' }>): void {
    if (this.status.kind === 'open') this.send(encodeControl(message));
  }

  onTurn(listener: Listener<TurnInfo>): () => void {
    this.turnListeners.add(listener);
    return () => this.turnListeners.delete(listener);
  }

  private setStatus(status: ConnectionStatus): void {
    this.status = status;
    for (const listener of this.statusListeners) listener(status);
  }

  private connect(): void {
    if (this.destroyed) return;
    this.setStatus({ kind: 'connecting', attempt: this.attempt });
    const socket = this.options.createSocket(this.options.url);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    socket.onopen = () => {
      socket.send(
        encodeControl({
          type: 'hello',
          protocolVersion: PROTOCOL_VERSION,
          workspaceId: this.options.workspaceId,
          token: this.options.token,
        }),
      );
    };
    socket.onmessage = (event: { data: unknown }) => this.receive(toBytes(event.data));
    socket.onclose = (event: { code: number; reason?: string }) => this.onSocketClosed(socket, event.code, event.reason);
    socket.onerror = () => {
      // The close event that follows carries what we need; an error alone says nothing more.
    };
  }

  private onSocketClosed(socket: WebSocketLike, code: number, reason?: string): void {
    if (socket !== this.socket) return;
    this.socket = null;
    this.clearPing();
    this.applyQueued();
    // Other people's cursors are stale once we cannot hear them; they come back on resync.
    for (const handle of this.docs.values()) {
      const others = [...handle.awareness.getStates().keys()].filter((id) => id !== handle.doc.clientID);
      awarenessProtocol.removeAwarenessStates(handle.awareness, others, this);
    }
    for (const resolve of this.pending.values()) {
      resolve({ ok: false, code: 'disconnected', message: 'The connection dropped before the gateway answered.' });
    }
    this.pending.clear();
    this.completions.disconnected();
    if (this.destroyed) return;
    if (!shouldReconnect(code)) {
      this.setStatus({ kind: 'closed', code, message: describeClose(code, reason) });
      return;
    }
    const delay = Math.min(
      this.options.maxBackoffMs ?? 5_000,
      (this.options.minBackoffMs ?? 250) * 2 ** Math.min(this.attempt, 10),
    );
    this.attempt++;
    this.setStatus({ kind: 'connecting', attempt: this.attempt });
    this.reconnectTimer = this.timers.setTimeout(() => this.connect(), delay * (0.75 + Math.random() * 0.5));
  }

  private send(frame: Uint8Array): void {
    if (this.socket?.readyState === OPEN && this.status.kind === 'open') this.socket.send(frame);
  }

  private receive(bytes: Uint8Array): void {
    const frame = decodeServerFrame(bytes);
    if (isDecodeError(frame)) {
      this.socket?.close(CloseCode.MalformedFrame, frame.error);
      return;
    }
    if (frame.channel === Channel.Control) {
      this.applyQueued();
      return this.control(frame.message);
    }
    const handle = this.docs.get(frame.docId);
    if (!handle) return; // closed locally while the frame was in flight
    const schedule = this.options.scheduleRemoteApply;
    if (schedule && (frame.channel === Channel.Awareness || frame.payload[0] === syncProtocol.messageYjsUpdate)) {
      let queue = this.queued.get(handle);
      if (!queue) this.queued.set(handle, (queue = []));
      queue.push({ channel: frame.channel, payload: frame.payload });
      if (!this.applyScheduled) {
        this.applyScheduled = true;
        schedule(() => this.applyQueued());
      }
      return;
    }
    this.applyQueued();
    if (frame.channel === Channel.Awareness) return this.applyAwareness(handle, frame.payload);
    const decoder = decoding.createDecoder(frame.payload);
    // y-protocols' readSyncMessage would log and swallow an update that does not apply.
    const type = decoding.readVarUint(decoder);
    if (type === syncProtocol.messageYjsSyncStep1) {
      // What the gateway lacks (edits made offline): in pieces if it is larger than a frame.
      const missing = Y.encodeStateAsUpdate(handle.doc, decoding.readVarUint8Array(decoder));
      if (this.canWrite()) this.sendUpdate(frame.docId, syncProtocol.messageYjsSyncStep2, missing);
      return;
    }
    if (!this.applyRemoteUpdate(handle, decoding.readVarUint8Array(decoder))) return;
    if (type === syncProtocol.messageYjsSyncStep2) handle.markSynced();
  }

  /**
   * Sends an update, cut into pieces that each fit the gateway's frame limit: a big paste or
   * an hour's offline work is never refused for its size (DESIGN §11.1).
   */
  private sendUpdate(docId: string, messageType: number, update: Uint8Array): void {
    const header = startDocFrame(Channel.Sync, docId);
    const overhead = encoding.length(header) + 16; // the message type and the update's length
    for (const piece of splitUpdate(update, this.maxFrameBytes - overhead)) {
      const frame = startDocFrame(Channel.Sync, docId);
      encoding.writeVarUint(frame, messageType);
      encoding.writeVarUint8Array(frame, piece);
      this.send(encoding.toUint8Array(frame));
    }
  }

  /** Applies an update from the gateway; false (and a resync) when it does not apply. */
  private applyRemoteUpdate(handle: DocHandle, update: Uint8Array): boolean {
    try {
      Y.applyUpdate(handle.doc, update, this);
      return true;
    } catch (error) {
      this.syncFailed(handle, error);
      return false;
    }
  }

  private applyAwareness(handle: DocHandle, payload: Uint8Array): void {
    const problem = applyRemoteAwareness(handle.awareness, payload, this);
    if (problem) this.fault({ docId: handle.docId, channel: 'awareness', message: problem });
  }

  /**
   * An update from the gateway did not apply (Yjs applies updates partly before it throws):
   * report it and ask again for everything the doc lacks, so it converges with the others.
   */
  private syncFailed(handle: DocHandle, error: unknown): void {
    this.fault({ docId: handle.docId, channel: 'sync', message: `an update that does not apply (${String(error)})` });
    const step1 = startDocFrame(Channel.Sync, handle.docId);
    syncProtocol.writeSyncStep1(step1, handle.doc);
    this.send(encoding.toUint8Array(step1));
  }

  private fault(fault: RemoteFault): void {
    this.faultCount++;
    for (const listener of this.faultListeners) listener(fault);
  }

  /** Tells `listener` about what the gateway relayed that this client could not apply. */
  onFault(listener: Listener<RemoteFault>): () => void {
    this.faultListeners.add(listener);
    return () => this.faultListeners.delete(listener);
  }

  /** Applies every queued remote change: per doc, the updates in one transaction, then the cursors. */
  private applyQueued(): void {
    this.applyScheduled = false;
    if (this.queued.size === 0) return;
    const batches = [...this.queued];
    this.queued.clear();
    for (const [handle, items] of batches) {
      if (this.docs.get(handle.docId) !== handle) continue; // closed while it waited
      let failure: unknown = null;
      handle.doc.transact(() => {
        for (const item of items) {
          if (item.channel !== Channel.Sync) continue;
          const decoder = decoding.createDecoder(item.payload);
          decoding.readVarUint(decoder);
          try {
            Y.applyUpdate(handle.doc, decoding.readVarUint8Array(decoder), this);
          } catch (error) {
            failure = error;
          }
        }
      }, this);
      if (failure !== null) this.syncFailed(handle, failure);
      // After the text: a cursor is drawn where the text it points into already is.
      for (const item of items) if (item.channel === Channel.Awareness) this.applyAwareness(handle, item.payload);
    }
  }

  private canWrite(): boolean {
    return this.status.kind === 'open' && canWrite(this.status.role);
  }

  private control(message: ServerMessage): void {
    switch (message.type) {
      case 'welcome':
        this.attempt = 0;
        this.maxFrameBytes = message.limits.maxFrameBytes;
        this.setStatus({
          kind: 'open',
          role: message.role,
          sessionId: message.sessionId,
          workspaceName: message.workspaceName,
          ...(message.gateway ? { gateway: message.gateway } : {}),
        });
        this.resync([...this.docs.values()], 0, ++this.syncRound);
        this.schedulePing(0);
        return;
      case 'pong': {
        this.rttMs = this.timers.now() - message.sentAt;
        for (const listener of this.rttListeners) listener(this.rttMs);
        this.schedulePing(this.options.pingIntervalMs ?? 2_000);
        return;
      }
      case 'result': {
        const resolve = this.pending.get(message.requestId);
        this.pending.delete(message.requestId);
        if (message.ok) resolve?.({ ok: true, ...(message.turnId ? { turnId: message.turnId } : {}), ...(message.termId ? { termId: message.termId } : {}) });
        else {
          const retry = message.retryAfterMs !== undefined ? { retryAfterMs: message.retryAfterMs } : {};
          resolve?.({ ok: false, code: message.code, message: message.message, ...retry });
        }
        return;
      }
      case 'agent.turn':
        this.turns.set(message.turn.turnId, message.turn);
        for (const listener of this.turnListeners) listener(message.turn);
        return;
      case 'doc.missing':
        for (const listener of this.missingListeners) listener(message.docId);
        return;
      case 'complete.delta':
      case 'complete.result':
        return this.completions.receive(message);
      case 'term.state':
      case 'term.screen':
      case 'term.output':
      case 'term.typist':
        for (const listener of this.terminalListeners) listener(message);
        return;
      case 'search.result':
      case 'search.replaced': {
        const resolve = this.pending.get(message.requestId);
        this.pending.delete(message.requestId);
        return resolve?.({ ok: true, answer: message });
      }
    }
  }

  private schedulePing(delayMs: number): void {
    this.clearPing();
    this.pingTimer = this.timers.setTimeout(() => {
      this.pingTimer = null;
      this.send(encodeControl({ type: 'ping', sentAt: this.timers.now() }));
    }, delayMs);
  }

  private clearPing(): void {
    if (this.pingTimer !== null) this.timers.clearTimeout(this.pingTimer);
    this.pingTimer = null;
  }

  /**
   * Syncs the docs a reconnecting tab holds a batch at a time: a tab with hundreds of files open
   * would otherwise send three frames for each at once, past the gateway's rate limit (4429),
   * and reconnect into the same burst for ever.
   */
  private resync(handles: DocHandle[], from: number, round: number): void {
    if (round !== this.syncRound || this.status.kind !== 'open') return;
    for (const handle of handles.slice(from, from + resyncBatchDocs)) if (this.docs.get(handle.docId) === handle) this.startSync(handle);
    if (from + resyncBatchDocs < handles.length) this.timers.setTimeout(() => this.resync(handles, from + resyncBatchDocs, round), resyncBatchDelayMs);
  }

  private startSync(handle: DocHandle): void {
    const step1 = startDocFrame(Channel.Sync, handle.docId);
    syncProtocol.writeSyncStep1(step1, handle.doc);
    this.send(encoding.toUint8Array(step1));
    const local = handle.awareness.getLocalState();
    // Re-setting the state bumps its clock: peers that dropped this tab's state while it was
    // away would ignore a resend with the old clock.
    if (local !== null) handle.awareness.setLocalState(local);
  }

  private sendAwareness(handle: DocHandle, clients: number[]): void {
    const update = awarenessProtocol.encodeAwarenessUpdate(handle.awareness, clients);
    this.send(encodeDocFrame(Channel.Awareness, handle.docId, update));
  }

  /** Opens (or returns the open) document and keeps it in sync until `closeDoc`. */
  openDoc(docId: string): DocHandle {
    const existing = this.docs.get(docId);
    if (existing) return existing;
    const handle = new DocHandle(docId);
    this.docs.set(docId, handle);
    const onUpdate = (update: Uint8Array, origin: unknown) => {
      // Remote changes arrive with this client as origin; only local ones go out. A viewer's
      // local changes are never sent: the gateway would close the socket for them.
      if (origin === this || !this.canWrite()) return;
      this.sendUpdate(docId, syncProtocol.messageYjsUpdate, update);
    };
    const onAwareness = (
      change: { added: number[]; updated: number[]; removed: number[] },
      origin: unknown,
    ) => {
      if (origin !== LOCAL) return;
      this.sendAwareness(handle, [...change.added, ...change.updated, ...change.removed]);
    };
    handle.doc.on('update', onUpdate);
    handle.awareness.on('update', onAwareness);
    this.detach.set(docId, () => {
      handle.doc.off('update', onUpdate);
      handle.awareness.off('update', onAwareness);
    });
    if (this.status.kind === 'open') this.startSync(handle);
    return handle;
  }

  closeDoc(docId: string): void {
    const handle = this.docs.get(docId);
    if (!handle || docId === INDEX_DOC_ID) return;
    this.send(encodeControl({ type: 'doc.close', docId }));
    this.detach.get(docId)?.();
    this.detach.delete(docId);
    this.docs.delete(docId);
    handle.destroy();
  }

  getDoc(docId: string): DocHandle | undefined {
    return this.docs.get(docId);
  }

  /** Creates, renames, moves or deletes a file or folder; the gateway checks and applies it. */
  request(op: DistributiveOmit<FileOp | AgentRequest | ThreadRequest | SearchRequest | Extract<TerminalRequest, { requestId: number }>, 'requestId'>): Promise<RequestResult> {
    if (this.status.kind !== 'open') {
      return Promise.resolve({ ok: false, code: 'disconnected', message: 'Not connected to the gateway.' });
    }
    const requestId = this.nextRequestId++;
    const frame = encodeControl({ ...op, requestId } as FileOp | AgentRequest | ThreadRequest | SearchRequest | TerminalRequest);
    if (frame.byteLength > this.maxFrameBytes) {
      const message = `This request is ${Math.ceil(frame.byteLength / 1024)} KB, over the gateway's limit of ${Math.floor(this.maxFrameBytes / 1024)} KB; nothing was sent. Shorten it.`;
      return Promise.resolve({ ok: false, code: 'invalid_message', message });
    }
    return new Promise((resolve) => {
      this.pending.set(requestId, resolve);
      this.send(frame);
    });
  }

  /**
   * Asks the agent to rewrite [anchor, head) of a file (an empty range: that line). Positions
   * travel as Yjs relative positions, so edits in flight do not shift the region. They index the
   * file as the gateway has it: a file this client has not opened yet is opened and synced first
   * (against an empty copy, every offset would mean the end of the file).
   */
  async prompt(request: { fileId: string; anchor: number; head: number; instruction: string; route?: AgentRoute }): Promise<RequestResult> {
    const handle = this.openDoc(request.fileId);
    if (!handle.synced && this.status.kind === 'open' && !(await this.untilSynced(handle))) {
      return { ok: false, code: 'disconnected', message: 'Not connected to the gateway.' };
    }
    const text = handle.doc.getText(FILE_TEXT_KEY);
    const encode = (index: number) => toBase64(Y.encodeRelativePosition(Y.createRelativePositionFromTypeIndex(text, index)));
    return this.request({
      type: 'agent.prompt',
      fileId: request.fileId,
      anchor: encode(request.anchor),
      head: encode(request.head),
      instruction: request.instruction,
      route: request.route ?? 'fast',
    });
  }

  /** True once `handle` synced; false if the connection closed first. */
  private untilSynced(handle: DocHandle): Promise<boolean> {
    return new Promise((resolve) => {
      const stop = this.onStatus((status) => {
        if (status.kind === 'open') return;
        stop();
        resolve(false);
      });
      void handle.whenSynced().then(() => {
        stop();
        resolve(true);
      });
    });
  }

  /**
   * Asks for ghost text at `index` of a file ([P25]): streamed, then one result ([P26]). The
   * gateway keeps one completion in flight per session, so a new one cancels the previous.
   * Viewers get a failed result at once: they cannot type ([P29]). Use a `Completer` to drive it.
   */
  complete(request: { fileId: string; index: number; openFileIds: string[] }): CompletionStream {
    if (this.status.kind === 'open' && !this.canWrite()) return settledStream(failure('forbidden', 'Viewers get no completions.'));
    const handle = this.docs.get(request.fileId);
    if (!handle) return settledStream(failure('not_found', 'That file is not open in this tab.'));
    const text = handle.doc.getText(FILE_TEXT_KEY);
    // Tied to the character before the cursor: text others insert after it does not move it.
    const position = toBase64(Y.encodeRelativePosition(Y.createRelativePositionFromTypeIndex(text, request.index, -1)));
    return this.completions.request(request.fileId, position, request.openFileIds);
  }

  /** What the user did with a suggestion ([P28]): for the gateway's metrics. */
  completionFeedback(requestId: number, outcome: CompletionOutcome, latencyMs: number): void {
    this.completions.feedback(requestId, outcome, latencyMs);
  }

  /**
   * The workspace's agent thread (a doc only the gateway writes): open it to read and follow it
   * (`readThread(handle.doc)`); change it with `threadSend` / `threadStop`.
   */
  openThread(): DocHandle {
    return this.openDoc(THREAD_DOC_ID);
  }

  /**
   * Sends a message to the agent thread. While a turn streams, `mode: 'send'` steers it and
   * `'queue'` waits for it to end. `selection` (the file on screen) travels as Yjs relative
   * positions, like a prompt's; `mentions` are paths.
   */
  async threadSend(message: {
    text: string;
    route?: AgentRoute;
    mode?: 'send' | 'queue';
    mentions?: string[];
    selection?: { fileId: string; anchor: number; head: number };
  }): Promise<RequestResult> {
    const context: ThreadContext = { mentions: message.mentions ?? [] };
    if (message.selection) {
      const handle = this.docs.get(message.selection.fileId);
      context.fileId = message.selection.fileId;
      if (handle?.synced) {
        const text = handle.doc.getText(FILE_TEXT_KEY);
        const encode = (index: number) => toBase64(Y.encodeRelativePosition(Y.createRelativePositionFromTypeIndex(text, index)));
        context.anchor = encode(message.selection.anchor);
        context.head = encode(message.selection.head);
      }
    }
    return this.request({ type: 'thread.send', text: message.text, route: message.route ?? 'fast', mode: message.mode ?? 'send', context });
  }

  /**
   * Searches every file of the workspace on the gateway ([P36]): matches grouped by file. A new
   * search (or replace) from this client ends the one before it, which answers `busy`.
   */
  async search(query: SearchQuery): Promise<Extract<SearchAnswer, { type: 'search.result' }> | Extract<RequestResult, { ok: false }>> {
    const result = await this.request({ type: 'search.run', query });
    if (!result.ok) return result;
    if (result.answer?.type !== 'search.result') return { ok: false, code: 'invalid_message', message: 'The gateway answered the search with something else.' };
    return result.answer;
  }

  /** Replaces every match of `query` in these files, one transaction per file ([P37]); editors only. */
  async replaceAll(query: SearchQuery, replacement: string, fileIds: string[]): Promise<Extract<SearchAnswer, { type: 'search.replaced' }> | Extract<RequestResult, { ok: false }>> {
    const result = await this.request({ type: 'search.replace', query, replacement, fileIds });
    if (!result.ok) return result;
    if (result.answer?.type !== 'search.replaced') return { ok: false, code: 'invalid_message', message: 'The gateway answered the replace with something else.' };
    return result.answer;
  }

  /** Undoes this client's last replace in every file it changed, one step ([P37]); editors only. */
  async undoReplace(): Promise<Extract<SearchAnswer, { type: 'search.replaced' }> | Extract<RequestResult, { ok: false }>> {
    const result = await this.request({ type: 'search.undo' });
    if (!result.ok) return result;
    if (result.answer?.type !== 'search.replaced') return { ok: false, code: 'invalid_message', message: 'The gateway answered the undo with something else.' };
    return result.answer;
  }

  /** Esc / Stop for the agent thread: its turn stops; what it wrote stays for review. */
  threadStop(): Promise<RequestResult> {
    return this.request({ type: 'thread.stop' });
  }

  /**
   * Accepts, rejects or takes back the review of a thread turn's file operations (files it
   * created, renamed, deleted; SPEC [P35]): one (`opId`) or all of the turn's. The gateway
   * makes the change: the tree is its to write. Hunks are reviewed with `review`.
   */
  threadReview(turnId: string, action: ThreadFileOpReview, opId?: string): Promise<RequestResult> {
    return this.request(opId === undefined ? { type: 'thread.review', turnId, action } : { type: 'thread.review', turnId, opId, action });
  }

  /** Esc / Stop: interrupts a turn; what it wrote stays for review. */
  cancelTurn(turnId: string): Promise<RequestResult> {
    return this.request({ type: 'agent.cancel', turnId });
  }

  /** Redirects a streaming turn: it continues from what it wrote with the new instruction. */
  steerTurn(turnId: string, instruction: string): Promise<RequestResult> {
    return this.request({ type: 'agent.steer', turnId, instruction });
  }

  /**
   * Accepts or rejects the agent's pending hunks in a file (all of a turn's, or one), as one
   * local transaction with `origin`, so an undo manager tracking it makes it one undo step.
   * Viewers cannot: the change would be refused by the gateway, so it is not made.
   */
  review(fileId: string, select: { turnId?: string; hunkId?: string }, action: ReviewAction, origin: unknown = REVIEW_ORIGIN): number {
    if (!this.canWrite()) return 0;
    const doc = this.openDoc(fileId).doc;
    return reviewHunks(
      doc,
      doc.getText(FILE_TEXT_KEY),
      (hunkId, record) => (select.hunkId === undefined || select.hunkId === hunkId) && (select.turnId === undefined || select.turnId === record.turnId),
      action,
      origin,
    );
  }

  destroy(): void {
    this.destroyed = true;
    this.queued.clear();
    if (this.reconnectTimer !== null) this.timers.clearTimeout(this.reconnectTimer);
    this.clearPing();
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000, 'client closed');
    this.completions.disconnected();
    for (const [docId, handle] of this.docs) {
      this.detach.get(docId)?.();
      handle.destroy();
    }
    this.docs.clear();
  }
}

/** A completion answered on this side, without asking the gateway. */
function settledStream(result: CompletionResult): CompletionStream {
  return { requestId: 0, received: '', onDelta: () => {}, result: Promise.resolve(result), cancel: () => {} };
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function toBytes(data: unknown): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new Error('the gateway sent a text frame; Flint frames are binary');
}

export { LOCAL as LOCAL_AWARENESS_ORIGIN };
