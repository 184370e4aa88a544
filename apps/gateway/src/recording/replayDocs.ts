import * as Y from 'yjs';
import type { Recording } from './Recording';

/**
 * The documents of a recording at a moment: every `update` frame up to it applied in order, to
 * fresh Y.Docs. `Replayer` does it incrementally: forward applies the frames since the last seek;
 * backward starts again from the first frame (Yjs has no undo of an applied update), so scrubbing
 * back gives exactly the state playing forward to that moment gives.
 */
export class Replayer {
  private docs = new Map<string, Y.Doc>();
  /** Index of the next frame to apply. */
  private next = 0;
  /** The update and awareness frames (a frame count is of both, as SessionRecorder counts); awareness ones change no document (data null). */
  private readonly updates: Array<{ t: number; doc: string; data: Uint8Array | null }>;

  constructor(recording: Recording) {
    this.updates = recording.frames.flatMap((frame): Array<{ t: number; doc: string; data: Uint8Array | null }> => {
      if (frame.ch === 'update') return [{ t: frame.t, doc: frame.doc, data: new Uint8Array(Buffer.from(frame.data, 'base64')) }];
      return frame.ch === 'awareness' ? [{ t: frame.t, doc: frame.doc, data: null }] : [];
    });
  }

  /** The recording's length in ms (its last update's or cursor's time). */
  get durationMs(): number {
    return this.updates.at(-1)?.t ?? 0;
  }

  /** How many update and awareness frames are passed now. */
  get position(): number {
    return this.next;
  }

  /** The documents after every update at or before `t` (ms since the recording began). */
  seek(t: number): ReadonlyMap<string, Y.Doc> {
    if (this.next > 0 && this.updates[this.next - 1]!.t > t) this.rewind();
    while (this.next < this.updates.length && this.updates[this.next]!.t <= t) this.apply(this.next++);
    return this.docs;
  }

  /** The documents after the first `count` update and awareness frames (a frame-exact scrub). */
  seekFrame(count: number): ReadonlyMap<string, Y.Doc> {
    if (count < this.next) this.rewind();
    while (this.next < Math.min(count, this.updates.length)) this.apply(this.next++);
    return this.docs;
  }

  private rewind(): void {
    for (const doc of this.docs.values()) doc.destroy();
    this.docs = new Map();
    this.next = 0;
  }

  private apply(index: number): void {
    const { doc: id, data } = this.updates[index]!;
    if (data === null) return;
    let doc = this.docs.get(id);
    if (!doc) this.docs.set(id, (doc = new Y.Doc({ gc: false })));
    Y.applyUpdate(doc, data);
  }
}
