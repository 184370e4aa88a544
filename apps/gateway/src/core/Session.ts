import {
  canWrite,
  Channel,
  CloseCode,
  decodeClientFrame,
  encodeControl,
  INDEX_DOC_ID,
  THREAD_DOC_ID,
  isDecodeError,
  PEER_COLORS,
  PROTOCOL_VERSION,
  startDocFrame,
  type ClientMessage,
  type Role,
  type ServerMessage,
  type TerminalRequest,
} from '@flint/protocol';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import * as syncProtocol from 'y-protocols/sync';
import * as Y from 'yjs';
import { StoreError, type LinkRecord } from './ports/Store';
import type { TimerHandle } from './ports/Clock';
import type { ExtensionSession, MessageNamespace, MessageOf } from './Extension';
import type { GatewayContext } from './GatewayContext';
import type { LiveDoc } from './LiveDoc';
import type { Connection, PeerSocket } from './PeerSocket';
import type { RoomSession } from './Subscriber';
import type { AwarenessEntry } from './AwarenessRelay';
import type { OpResult, Room } from './Room';
import { nameKey, presentAs, restampState, type PeerUser } from './peerPresence';
import { TokenBucket } from './TokenBucket';
import type { TerminalPeer } from './TerminalHost';

type State =
  | { phase: 'awaiting_hello'; timer: TimerHandle }
  | { phase: 'open'; room: Room; link: LinkRecord; expiryTimer: TimerHandle | null }
  | { phase: 'closed' };

/** What a session held back of one doc while its socket was full (see `Session.sendUpdate`). */
interface HeldBack {
  /** The doc's state vector the client will have once what was sent arrives; null: no update held. */
  state: Map<number, number> | null;
  /** The latest held-back cursor and presence entry per client. */
  cursors: Map<number, AwarenessEntry>;
}

/** Cursor and presence states per frame of a doc's snapshot. */
const snapshotFrameStates = 64;

/**
 * One authenticated WebSocket (one browser tab). Decodes and checks every inbound frame at the
 * edge (SPEC §Limits), then routes it: control messages, y-protocols sync and awareness per doc.
 * Anything the role does not allow closes the socket; other sessions never notice.
 */
export class Session implements Connection, RoomSession, TerminalPeer {
  readonly sessionId: string;
  private state: State;
  private readonly bucket: TokenBucket;
  private readonly docs = new Set<LiveDoc>();
  /** Docs whose changes found this session's socket full, until it drains. */
  private readonly heldBack = new Map<LiveDoc, HeldBack>();
  /** The latest status of each turn that found the socket full, until it drains. */
  private readonly heldTurns = new Map<string, Uint8Array>();
  /** Updates that build on changes not received yet, per doc (`applyUpdate`). */
  private readonly waiting = new Map<LiveDoc, Uint8Array[]>();
  private waitingBytes = 0;
  private shownAs: PeerUser | null = null;
  /** The user object the tab last announced, as JSON (`presentAs` stamps each new one once). */
  private lastAnnounced = '';
  /** The colour the tab last asked for (the one shown may differ: [P13]). */
  private colorAsked: string | null = null;

  constructor(
    private readonly socket: PeerSocket,
    private readonly ctx: GatewayContext,
  ) {
    this.sessionId = ctx.random.id('s');
    const { limits, helloTimeoutMs } = ctx.config;
    this.bucket = new TokenBucket(ctx.clock, limits.maxMessagesPerSecond, limits.maxMessagesPerSecond * 2);
    this.state = {
      phase: 'awaiting_hello',
      timer: ctx.clock.setTimeout(() => this.close(CloseCode.HelloTimeout, 'no hello'), helloTimeoutMs),
    };
  }

  /** Kept after close: the gateway needs it to forget the session. */
  private openedLinkId = '';
  /** This session as extensions see it, from its hello on (one object: they key their state by it). */
  private extensionView: ExtensionSession | null = null;

  get linkId(): string {
    return this.openedLinkId;
  }

  get workspaceId(): string {
    return this.state.phase === 'open' ? this.state.room.workspace.id : '';
  }

  get role(): Role | null {
    return this.state.phase === 'open' ? this.state.link.role : null;
  }

  send(frame: Uint8Array): void {
    if (this.socket.isOpen) this.socket.send(frame);
  }

  /**
   * Backpressure for a slow reader (a phone on a bad network, a suspended laptop): once more than
   * `slowClientBytes` wait in its socket, a doc's updates are not queued one by one behind them —
   * at 125 agent flushes a second that backlog grows without bound. The session notes the state
   * vector the client will have and, when the socket drains, sends everything since as one
   * update (Yjs merges the agent's runs of text: smaller than the frames it replaces). Nothing
   * is lost: the catch-up is computed from the doc itself.
   */
  sendUpdate(doc: LiveDoc, frame: Uint8Array, before: Map<number, number>): void {
    if (this.heldBack.get(doc)?.state) return; // the catch-up will carry it
    if (!this.congested()) return this.send(frame);
    this.holdBack(doc).state = new Map(before);
    this.ctx.metrics.inc('flint_updates_held_back_total');
  }

  /** Cursors and presence: while held back, only each client's latest entry is kept. */
  sendAwareness(doc: LiveDoc, frame: Uint8Array, entries: AwarenessEntry[]): void {
    if (!this.heldBack.has(doc) && !this.congested()) return this.send(frame);
    const cursors = this.holdBack(doc).cursors;
    for (const entry of entries) cursors.set(entry.clientId, entry);
  }

  /** A turn's status: while the socket is full, only each turn's latest is kept. */
  sendTurn(turnId: string, frame: Uint8Array): void {
    if (this.heldTurns.size === 0 && !this.congested()) return this.send(frame);
    this.heldTurns.delete(turnId); // re-inserted: drained in the order of their latest status
    this.heldTurns.set(turnId, frame);
  }

  /** The socket drained: what was held back goes out. */
  drained(): void {
    if (this.state.phase === 'open') this.releaseHeldBack();
  }

  /**
   * Per doc one update and one awareness frame, then the turns' statuses (after the text, so a
   * HUD never runs ahead of it).
   */
  private releaseHeldBack(): void {
    if (this.heldBack.size === 0 && this.heldTurns.size === 0) return;
    const held = [...this.heldBack];
    const turns = [...this.heldTurns.values()];
    this.heldBack.clear();
    this.heldTurns.clear();
    for (const [doc, { state, cursors }] of held) {
      if (!this.docs.has(doc)) continue; // closed meanwhile
      if (state) {
        const encoder = startDocFrame(Channel.Sync, doc.docId);
        syncProtocol.writeUpdate(encoder, Y.encodeStateAsUpdate(doc.doc, encodeStateVector(state)));
        this.send(encoding.toUint8Array(encoder));
      }
      if (cursors.size > 0) this.send(doc.awarenessFrame([...cursors.values()]));
    }
    for (const frame of turns) this.send(frame);
  }

  private congested(): boolean {
    return this.socket.bufferedBytes > this.ctx.config.slowClientBytes;
  }

  private holdBack(doc: LiveDoc): HeldBack {
    let held = this.heldBack.get(doc);
    if (!held) this.heldBack.set(doc, (held = { state: null, cursors: new Map() }));
    return held;
  }

  /** Terminal frames (`TerminalPeer`): control messages like any other. */
  sendTerminal(message: ServerMessage): void {
    this.sendControl(message);
  }

  /** A terminal adds nothing to a socket holding a quarter of what makes a tab slow: edits go first. */
  terminalBacklogged(): boolean {
    return this.socket.bufferedBytes > this.ctx.config.slowClientBytes / 4;
  }

  private sendControl(message: ServerMessage): void {
    // A reply never overtakes the updates before it (a created file is in the index the client
    // has when its request resolves): what was held back goes first, full socket or not.
    this.releaseHeldBack();
    this.send(encodeControl(message));
  }

  receive(data: Uint8Array): void {
    if (this.state.phase === 'closed') return;
    const { metrics, config } = this.ctx;
    metrics.inc('flint_frames_in_total');
    metrics.inc('flint_bytes_in_total', undefined, data.byteLength);
    if (data.byteLength > config.limits.maxFrameBytes) return this.close(CloseCode.FrameTooLarge, 'frame too large');
    if (!this.bucket.take()) return this.close(CloseCode.RateLimited, 'rate limited');
    const frame = decodeClientFrame(data);
    if (isDecodeError(frame)) return this.close(CloseCode.MalformedFrame, frame.error);
    const state = this.state;
    if (state.phase === 'awaiting_hello') {
      if (frame.channel !== Channel.Control || frame.message.type !== 'hello') {
        return this.close(CloseCode.MalformedFrame, 'expected hello');
      }
      try {
        return this.hello(frame.message, state.timer);
      } catch (error) {
        if (error instanceof StoreError) return this.storeUnavailable(error);
        throw error;
      }
    }
    try {
      // Cursors write nothing, and are the most frequent frames: the check may read the store.
      if (frame.channel !== Channel.Awareness && !this.ctx.links.stillValid(state.link.id)) return this.close(CloseCode.LinkRevoked, 'link revoked');
      if (frame.channel === Channel.Control) this.control(frame.message, state.room);
      else if (frame.channel === Channel.Sync) this.sync(frame.docId, frame.payload, state.room, state.link.role);
      else this.awareness(frame.docId, frame.payload, state.room);
    } catch (error) {
      if (error instanceof StoreError) return this.storeUnavailable(error);
      // Yjs and lib0 throw on truncated or corrupt payloads: the client's fault, not ours.
      this.ctx.log('warn', 'closing session on undecodable payload', { sessionId: this.sessionId, error: String(error) });
      this.close(CloseCode.MalformedFrame, 'undecodable payload');
    }
  }

  /** The store did not answer (a link lookup, a doc load): not the client's fault; it retries. */
  private storeUnavailable(error: StoreError): void {
    this.ctx.log('error', 'closing session: the store is unavailable', { sessionId: this.sessionId, error: error.message });
    this.close(CloseCode.StoreUnavailable, 'the store is unavailable');
  }

  private hello(message: Extract<ClientMessage, { type: 'hello' }>, timer: TimerHandle): void {
    const { clock, links, rooms, config } = this.ctx;
    clock.clearTimeout(timer);
    if (message.protocolVersion !== PROTOCOL_VERSION) {
      return this.close(CloseCode.ProtocolVersion, `server speaks protocol ${PROTOCOL_VERSION}`);
    }
    const auth = links.authenticate(message.workspaceId, message.token);
    if (!auth.ok) return this.close(auth.closeCode, auth.message);
    const room = rooms.get(message.workspaceId);
    if (!room) return this.close(CloseCode.WorkspaceNotFound, 'no such workspace');
    const { link } = auth;
    const refused = this.ctx.sessionRefused(link.id, this.address);
    if (refused) return this.close(CloseCode.TooManySessions, refused);
    const expiryTimer =
      link.expiresAt === null
        ? null
        : clock.setTimeout(() => this.close(CloseCode.LinkExpired, 'link expired'), link.expiresAt - clock.now());
    this.state = { phase: 'open', room, link, expiryTimer };
    this.openedLinkId = link.id;
    room.sessions.add(this);
    this.ctx.sessionOpened(this);
    const session = this;
    this.extensionView = {
      sessionId: this.sessionId,
      linkId: link.id,
      role: link.role,
      workspaceId: room.workspace.id,
      get user() {
        return session.shownAs;
      },
      send: (frame) => this.send(frame),
      sendControl: (message) => this.sendControl(message),
      close: (code, reason) => this.close(code, reason),
    };
    this.sendControl({
      type: 'welcome',
      protocolVersion: PROTOCOL_VERSION,
      sessionId: this.sessionId,
      workspaceId: room.workspace.id,
      workspaceName: room.workspace.name,
      role: link.role,
      limits: config.limits,
      gateway: this.ctx.gatewayId,
    });
    // After the welcome: what an extension tells a joiner (a turn streaming now) follows it.
    this.ctx.extensions.notify('onSessionOpen', this.extensionView, room);
    this.ctx.terminals.joined(this, room.workspace.id);
  }

  private control(message: ClientMessage, room: Room): void {
    switch (message.type) {
      case 'hello':
        return this.close(CloseCode.MalformedFrame, 'hello sent twice');
      case 'ping':
        return this.sendControl({ type: 'pong', sentAt: message.sentAt });
      case 'doc.close': {
        const doc = room.doc(message.docId);
        if (doc) {
          doc.unsubscribe(this);
          this.docs.delete(doc);
          this.heldBack.delete(doc);
          this.forgetWaiting(doc);
        }
        return;
      }
      case 'file.create':
      case 'file.rename':
      case 'file.delete': {
        // A viewer's tab may offer the action by mistake: an answer, not a dropped connection.
        const result: OpResult = canWrite(this.role ?? 'viewer') ? room.apply(message) : { ok: false, code: 'forbidden', message: 'Viewers cannot create, rename or delete files; ask the owner for an editor link.' };
        this.ctx.metrics.inc('flint_file_ops_total', { op: message.type, ok: String(result.ok) });
        return this.sendResult(message.requestId, result);
      }
      default:
        // `term.*` goes to the terminals the gateway was given ([P43]); the rest to its extension.
        if (message.type.startsWith('term.')) return this.ctx.terminals.handle(message as TerminalRequest, this, room.workspace.id);
        return this.toExtension(message, room);
    }
  }

  /** A message of a namespace the kernel does not own goes to the extension registered for it. */
  private toExtension(message: MessageOf<MessageNamespace>, room: Room): void {
    const extension = this.ctx.extensions.for(message);
    if (!extension?.onMessage || !this.extensionView) {
      const requestId = 'requestId' in message ? message.requestId : null;
      if (requestId !== null) this.sendResult(requestId, { ok: false, code: 'not_configured', message: `This gateway does not offer ${message.type}.` });
      return;
    }
    const done = extension.onMessage(message, this.extensionView, room);
    done?.catch((error: unknown) => {
      if (error instanceof StoreError) return this.storeUnavailable(error);
      this.ctx.log('error', `an extension failed: ${message.type}`, { sessionId: this.sessionId, namespace: extension.namespace, error: String(error) });
    });
  }

  private sendResult(requestId: number, result: OpResult): void {
    if (result.ok) this.sendControl({ type: 'result', requestId, ok: true });
    else this.sendControl({ type: 'result', requestId, ok: false, code: result.code, message: result.message });
  }

  private sync(docId: string, payload: Uint8Array, room: Room, role: Role): void {
    const decoder = decoding.createDecoder(payload);
    const messageType = decoding.readVarUint(decoder);
    const doc = room.doc(docId);
    if (!doc) return this.sendControlMissing(docId);
    if (messageType === syncProtocol.messageYjsSyncStep1) {
      const stateVector = decoding.readVarUint8Array(decoder);
      this.subscribe(doc);
      const reply = startDocFrame(Channel.Sync, docId);
      syncProtocol.writeSyncStep2(reply, doc.doc, stateVector);
      this.send(encoding.toUint8Array(reply));
      // Ask writers for what they have that we lack (edits made while disconnected).
      if (canWrite(role) && docId !== INDEX_DOC_ID && docId !== THREAD_DOC_ID) {
        const ask = startDocFrame(Channel.Sync, docId);
        syncProtocol.writeSyncStep1(ask, doc.doc);
        this.send(encoding.toUint8Array(ask));
      }
      return;
    }
    if (messageType !== syncProtocol.messageYjsSyncStep2 && messageType !== syncProtocol.messageYjsUpdate) {
      return this.close(CloseCode.MalformedFrame, 'unknown sync message');
    }
    if (!canWrite(role)) return this.close(CloseCode.Forbidden, 'viewers cannot edit');
    if (docId === INDEX_DOC_ID) return this.close(CloseCode.Forbidden, 'the file tree changes only through file operations');
    if (docId === THREAD_DOC_ID) return this.close(CloseCode.Forbidden, 'the agent thread changes only through thread messages');
    if (!this.docs.has(doc)) return this.close(CloseCode.MalformedFrame, 'update before sync step 1');
    const update = decoding.readVarUint8Array(decoder);
    if (doc.wouldExceedLimit(update.byteLength)) return this.close(CloseCode.DocumentTooLarge, 'document too large');
    this.applyUpdate(doc, update);
  }

  /**
   * Applies an update whole or not at all (`LiveDoc.accept`). One that builds on changes the
   * gateway does not have yet waits here, in the session, not in the document: a reconnecting
   * tab may type before its catch-up (the step 2 answering ours) arrives, but nothing may wait
   * forever or without bound, and it all goes when the session does.
   */
  private applyUpdate(doc: LiveDoc, update: Uint8Array): void {
    const check = doc.accept(update, this);
    if (check.ok) return this.retryWaiting(doc);
    this.ctx.metrics.inc('flint_updates_refused_total', { kind: check.kind });
    // Writing under another tab's client id: most likely a hostile peer, but an honest tab can
    // relay a catch-up of someone else's edits another gateway lost; a retry finds them stored.
    if (check.kind === 'foreign') return this.close(CloseCode.OutOfSync, `update refused: ${check.reason}`);
    if (check.kind !== 'incomplete') return this.close(CloseCode.MalformedFrame, `update refused: ${check.reason}`);
    if (this.waitingBytes + update.byteLength > this.ctx.config.limits.maxFrameBytes || !this.ctx.waiting.take(update.byteLength)) {
      return this.close(CloseCode.OutOfSync, 'updates build on changes the gateway never received');
    }
    const waiting = this.waiting.get(doc) ?? [];
    this.waiting.set(doc, [...waiting, update]);
    this.waitingBytes += update.byteLength;
  }

  private retryWaiting(doc: LiveDoc): void {
    let waiting = this.waiting.get(doc);
    for (let progress = true; waiting && progress; ) {
      progress = false;
      for (const update of waiting) {
        if (!doc.accept(update, this).ok) continue;
        this.waitingBytes -= update.byteLength;
        this.ctx.waiting.release(update.byteLength);
        waiting = waiting.filter((u) => u !== update);
        progress = true;
      }
    }
    if (!waiting) return;
    if (waiting.length > 0) this.waiting.set(doc, waiting);
    else this.waiting.delete(doc);
  }

  private forgetWaiting(doc: LiveDoc): void {
    for (const update of this.waiting.get(doc) ?? []) {
      this.waitingBytes -= update.byteLength;
      this.ctx.waiting.release(update.byteLength);
    }
    this.waiting.delete(doc);
  }

  private sendControlMissing(docId: string): void {
    this.sendControl({ type: 'doc.missing', docId });
  }

  private subscribe(doc: LiveDoc): void {
    if (this.docs.has(doc)) return;
    this.docs.add(doc);
    doc.subscribers.add(this);
    // Bounded, and in frames of a bounded size: a joiner never receives megabytes of cursors.
    const states = doc.awareness.snapshot(this.ctx.config.sessions.snapshotStates);
    for (let at = 0; at < states.length; at += snapshotFrameStates) this.send(doc.awarenessFrame(states.slice(at, at + snapshotFrameStates)));
  }

  private awareness(docId: string, payload: Uint8Array, room: Room): void {
    const doc = room.doc(docId);
    // A file deleted just as this tab opened it: its sync step 1 was answered `doc.missing`, and
    // the awareness that followed it is dropped, not a protocol error.
    if (!doc) return;
    if (!this.docs.has(doc)) return this.close(CloseCode.MalformedFrame, 'awareness before sync step 1');
    const result = doc.awareness.apply(payload, this, (state) => restampState(state, (user) => this.presentAs(user, room)));
    if ('refused' in result) return this.close(CloseCode.MalformedFrame, result.refused);
    doc.broadcastAwareness(result, this);
  }

  /**
   * Who this session shows as: the name and colour it announced, made safe, never the agent's
   * flag, and never a name a session of another link shows as (no posing as someone present).
   */
  private presentAs(announced: unknown, room: Room): PeerUser {
    // A cursor moves many times a second with the same user: stamped once per announcement.
    const asked = JSON.stringify(announced);
    if (this.shownAs && asked === this.lastAnnounced && this.shownAs.role === (this.role ?? 'viewer')) return this.shownAs;
    this.lastAnnounced = asked;
    const role = this.role ?? 'viewer';
    const taken = (name: string) => {
      const key = nameKey(name);
      for (const other of room.sessions) {
        if (other !== this && other.linkId !== this.linkId && other.user && nameKey(other.user.name) === key) return true;
      }
      return room.remoteNameTaken(key, this.linkId);
    };
    const previous = this.shownAs;
    const stamped = presentAs(announced, previous, role, taken, this.linkId);
    // Stable for the session: the colour is decided again only when the tab asks for another.
    if (previous && stamped.color === this.colorAsked) stamped.color = previous.color;
    else {
      this.colorAsked = stamped.color;
      stamped.color = this.distinctColor(stamped.color, room);
    }
    this.shownAs = stamped;
    // Terminals list people by name (who may type): a new name is news there too.
    if (previous?.name !== stamped.name || previous?.color !== stamped.color) this.ctx.terminals.joined(this, room.workspace.id);
    return stamped;
  }

  /**
   * Two people drawn in one colour cannot be told apart: a colour another session of the room
   * shows gives way to the first of the palette that no one shows (if any is left).
   */
  private distinctColor(asked: string, room: Room): string {
    const inUse = room.remoteColors();
    for (const other of room.sessions) if (other !== this && other.user) inUse.add(other.user.color.toLowerCase());
    if (!inUse.has(asked.toLowerCase())) return asked;
    return PEER_COLORS.find((color) => !inUse.has(color)) ?? asked;
  }

  /** The client's address (per-address caps); '' when the transport does not know it. */
  get address(): string {
    return this.socket.remoteAddress ?? '';
  }

  get user(): PeerUser | null {
    return this.shownAs;
  }

  close(code: number, reason: string): void {
    if (this.state.phase === 'closed') return;
    this.ctx.metrics.inc('flint_session_closes_total', { code });
    if (this.socket.isOpen) this.socket.close(code, reason);
    this.closed();
  }

  /** The socket is gone (either side closed it): leave the room and free timers. */
  closed(): void {
    const state = this.state;
    if (state.phase === 'closed') return;
    this.state = { phase: 'closed' };
    if (state.phase === 'awaiting_hello') {
      this.ctx.clock.clearTimeout(state.timer);
      return;
    }
    if (state.expiryTimer !== null) this.ctx.clock.clearTimeout(state.expiryTimer);
    for (const doc of this.docs) doc.unsubscribe(this);
    this.docs.clear();
    this.heldBack.clear();
    this.heldTurns.clear();
    this.waiting.clear();
    this.ctx.waiting.release(this.waitingBytes);
    this.waitingBytes = 0;
    state.room.leave(this);
    if (this.extensionView) this.ctx.extensions.notify('onSessionClose', this.extensionView, state.room);
    this.ctx.sessionClosed(this, state.room);
  }
}

/** A state vector in Yjs's encoding (as `Y.encodeStateVector` writes a doc's). */
function encodeStateVector(state: Map<number, number>): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, state.size);
  for (const [client, clock] of state) {
    encoding.writeVarUint(encoder, client);
    encoding.writeVarUint(encoder, clock);
  }
  return encoding.toUint8Array(encoder);
}
