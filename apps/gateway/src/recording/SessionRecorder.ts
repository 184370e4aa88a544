import * as Y from 'yjs';
import type { AwarenessEntry } from '../core/AwarenessRelay';
import type { Clock, TimerHandle } from '../core/ports/Clock';
import type { LiveDoc } from '../core/LiveDoc';
import type { Room } from '../core/Room';
import { RECORDING_FORMAT, RECORDING_VERSION, type RecordedFrame, type Recording } from './Recording';

const base64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/**
 * Records a workspace as the gateway sees it (issue 37): every update of every document —
 * people's typing, file operations in the tree, the thread's messages, the agent's tokens as it
 * flushes them — with its time. A document's first frame is its whole state (when the recording
 * starts, or when the document is first loaded after), so a replay rebuilds each one exactly
 * from its frames (`replayDocs`). Costs one base64 copy per update while it runs.
 *
 * Awareness too: every cursor, selection and name a tab or the agent shows in a document (the
 * document is the file it has open), with the state each one showed when the recording began.
 * A peer's states are coalesced to at most one frame per `awarenessGapMs` in each document: a
 * burst keeps its first state at once and its last one at the end of the gap, so a replay shows
 * where every cursor came to rest, and a fast typist's 60 cursor moves a second cost 20 frames.
 */
export const awarenessGapMs = 50;
/** Past this many files not open when a recording starts, the others are recorded when first opened. */
const maxFilesLoadedAtStart = 5_000;

type Pending = { state: string | null; timer: TimerHandle | null; lastT: number };

/** A recording's caps, checked as each frame is kept; the first frame past one ends the recording. */
export interface RecorderLimits {
  maxFrames: number;
  /** The frames' payload (base64 text) in bytes. */
  maxBytes: number;
  /** Called once, when a cap is reached (the recorder has stopped following the room then). */
  onFull?: (reason: string) => void;
}

export class SessionRecorder {
  private readonly frames: RecordedFrame[] = [];
  private readonly detach: Array<() => void> = [];
  private readonly startedAt: number;
  private stopped = false;
  private bytes = 0;
  /** While the constructor records the states the recording starts from: all of them at t = 0. */
  private starting = true;
  /** Per document and awareness client: when its last frame was written, and a state waiting for the gap to end. */
  private readonly peers = new Map<string, Pending>();
  /** Why the recording stopped itself (a cap was reached), or null. */
  full: string | null = null;

  constructor(
    private readonly room: Room,
    private readonly clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>,
    private readonly title: string,
    private readonly limits: RecorderLimits = { maxFrames: Number.POSITIVE_INFINITY, maxBytes: Number.POSITIVE_INFINITY },
  ) {
    this.startedAt = clock.now();
    this.follow(room.index);
    this.follow(room.thread);
    for (const live of room.loadedFiles().values()) this.follow(live);
    const loaded = (_fileId: string, live: LiveDoc) => this.follow(live);
    room.docLoaded.add(loaded);
    this.detach.push(() => room.docLoaded.delete(loaded));
    // Files nobody has open have no document loaded: loaded now (docLoaded follows each), so a
    // replay starts from every file's text, not only the open ones'. A folder's files not read
    // yet (`listed`) and binary files have no document to record.
    let toLoad = maxFilesLoadedAtStart;
    for (const entry of room.entries.values()) {
      if (entry.kind !== 'file' || entry.listed || entry.binary || room.loaded(entry.fileId)) continue;
      if (toLoad-- <= 0 || this.full !== null) break;
      room.doc(entry.fileId);
    }
    this.starting = false;
  }

  get frameCount(): number {
    return this.frames.length;
  }

  /** The frames' payload so far, in bytes. */
  get byteCount(): number {
    return this.bytes;
  }

  /** Ends the recording; what it holds so far, whatever the room does next. */
  stop(): Recording {
    if (!this.stopped) {
      for (const undo of this.detach.splice(0)) undo();
      // A state still waiting for its gap is where that cursor came to rest: kept, at its time.
      for (const [key, peer] of this.peers) {
        if (peer.timer === null) continue;
        this.clock.clearTimeout(peer.timer);
        this.writeAwareness(key, peer);
      }
    }
    this.stopped = true;
    return { format: RECORDING_FORMAT, version: RECORDING_VERSION, title: this.title, prompt: '', label: 'recording', frames: [...this.frames] };
  }

  private follow(live: LiveDoc): void {
    const doc = live.doc;
    const push = (update: Uint8Array) => {
      const data = base64(update);
      this.keep({ t: this.elapsed(), ch: 'update', doc: live.docId, data }, data.length);
    };
    push(Y.encodeStateAsUpdate(doc));
    const onUpdate = (update: Uint8Array) => push(update);
    doc.on('update', onUpdate);
    const onAwareness = (entries: readonly AwarenessEntry[]) => {
      for (const entry of entries) this.awareness(live.docId, entry.clientId, entry.stateJson === 'null' ? null : entry.stateJson);
    };
    for (const entry of live.awareness.snapshot()) onAwareness([entry]);
    live.awarenessWatchers.add(onAwareness);
    this.detach.push(() => live.awarenessWatchers.delete(onAwareness));
    // A doc destroyed (unloaded) and loaded again starts from its whole state again (docLoaded).
    const onDestroy = () => doc.off('update', onUpdate);
    doc.on('destroy', onDestroy);
    this.detach.push(() => {
      doc.off('update', onUpdate);
      doc.off('destroy', onDestroy);
    });
  }

  /**
   * Keeps a frame, or — past a cap — stops following the room at once (memory stays bounded
   * whether or not anyone asks for the status) and says why.
   */
  private keep(frame: RecordedFrame, bytes: number): void {
    if (this.stopped || this.full !== null) return;
    if (this.starting) frame.t = 0;
    const { maxFrames, maxBytes } = this.limits;
    if (this.frames.length + 1 > maxFrames || this.bytes + bytes > maxBytes) {
      this.full =
        this.frames.length + 1 > maxFrames
          ? `The recording reached its limit of ${maxFrames} changes and stopped; what it kept can be downloaded.`
          : `The recording reached its limit of ${Math.round(maxBytes / 1024 / 1024)} MB and stopped; what it kept can be downloaded.`;
      for (const undo of this.detach.splice(0)) undo();
      this.limits.onFull?.(this.full);
      return;
    }
    this.bytes += bytes;
    this.frames.push(frame);
  }

  /** Ms since the recording began; 0 for the states it starts from (however long loading them took). */
  private elapsed(): number {
    return this.starting ? 0 : this.clock.now() - this.startedAt;
  }

  private awareness(doc: string, client: number, state: string | null): void {
    const key = `${client} ${doc}`;
    const t = this.elapsed();
    const peer = this.peers.get(key);
    if (!peer) {
      this.peers.set(key, { state, timer: null, lastT: t });
      this.keep({ t, ch: 'awareness', doc, client, state }, state?.length ?? 4);
      return;
    }
    peer.state = state;
    if (peer.timer !== null) return; // the waiting state is replaced; its timer writes the newest
    const wait = peer.lastT + awarenessGapMs - t;
    if (wait <= 0) {
      peer.lastT = t;
      this.keep({ t, ch: 'awareness', doc, client, state }, state?.length ?? 4);
      return;
    }
    peer.timer = this.clock.setTimeout(() => this.writeAwareness(key, peer), wait);
  }

  private writeAwareness(key: string, peer: Pending): void {
    peer.timer = null;
    if (this.full !== null) return;
    const space = key.indexOf(' ');
    peer.lastT = Math.max(this.frames.at(-1)?.t ?? 0, this.clock.now() - this.startedAt);
    this.keep({ t: peer.lastT, ch: 'awareness', doc: key.slice(space + 1), client: Number(key.slice(0, space)), state: peer.state }, peer.state?.length ?? 4);
  }
}
