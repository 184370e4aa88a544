import * as Y from 'yjs';
import type { Clock } from '../core/ports/Clock';
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
 */
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
  /** Why the recording stopped itself (a cap was reached), or null. */
  full: string | null = null;

  constructor(
    private readonly room: Room,
    private readonly clock: Pick<Clock, 'now'>,
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
    if (!this.stopped) for (const undo of this.detach.splice(0)) undo();
    this.stopped = true;
    return { format: RECORDING_FORMAT, version: RECORDING_VERSION, title: this.title, prompt: '', label: 'recording', frames: [...this.frames] };
  }

  private follow(live: LiveDoc): void {
    const doc = live.doc;
    const push = (update: Uint8Array) => {
      const data = base64(update);
      this.keep({ t: this.clock.now() - this.startedAt, ch: 'update', doc: live.docId, data }, data.length);
    };
    push(Y.encodeStateAsUpdate(doc));
    const onUpdate = (update: Uint8Array) => push(update);
    doc.on('update', onUpdate);
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
}
