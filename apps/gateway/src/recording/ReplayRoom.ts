import * as Y from 'yjs';
import type { Subscriber } from '../core/Subscriber';
import type { Clock, TimerHandle } from '../core/ports/Clock';
import { GATEWAY_ORIGIN } from '../core/LiveDoc';
import type { Room } from '../core/Room';
import type { Recording } from './Recording';
import { Replayer } from './replayDocs';

/** What a replay needs of the gateway: its workspace's room held loaded, and emptied for a seek back. */
export interface ReplayHost {
  holdRoom(workspaceId: string): { room: Room; release(): void } | null;
  /** Empties the documents (Gateway.clearDocs): the room goes, its tabs reload. */
  clearDocs(workspaceId: string, docIds: Iterable<string>): void;
}

export const replaySpeeds = [1, 2, 10] as const;
export type ReplaySpeed = (typeof replaySpeeds)[number];

export interface ReplayState {
  playing: boolean;
  speed: ReplaySpeed;
  /** Where the replay is: ms since the recording began. */
  atMs: number;
  durationMs: number;
  title: string;
}

type Frame = { t: number; kind: 'update'; doc: string; data: Uint8Array } | { t: number; kind: 'awareness'; doc: string; client: number; state: string | null };

/** The owner of the recorded cursors in a replay's documents: no session, no link anyone holds. */
const recordedOwner: Subscriber = { sessionId: 'replay', linkId: 'replay', send: () => {} };

/**
 * Plays a recording into a workspace of its own (issue 37, decision 0035): the recorded updates
 * are applied to the room's documents as the gateway's own writes, at their recorded times divided
 * by the speed, so every tab sees the same moment live (stored and broadcast as any change), and
 * the recorded cursors are set as states the gateway publishes. Nobody writes there (everyone
 * holds a viewer link; the presenter's control is a separate secret). Going back empties the
 * documents (`ReplayHost.clearDocs`: tabs reload) and writes each one's state at that moment in
 * one update, made by `Replayer` from the same frames, so a document is the same at a moment
 * whether it was played to or scrubbed to.
 */
export class ReplayRoom {
  private readonly frames: Frame[];
  private next = 0;
  private held: { room: Room; release(): void };
  private playing = false;
  private speed: ReplaySpeed = 1;
  /** While playing: the recording's time and the clock's when play (or the last speed change) began. */
  private base = { atMs: 0, wallMs: 0 };
  private pausedAt = 0;
  private timer: TimerHandle | null = null;
  /** Updates for a file the index does not list yet (its entry comes in a later frame). */
  private readonly waiting = new Map<string, Uint8Array[]>();
  /** Every document written so far: what a seek back empties. */
  private readonly written = new Set<string>();
  private readonly replayer: Replayer;
  private closed = false;
  readonly durationMs: number;

  constructor(
    readonly workspaceId: string,
    private readonly recording: Recording,
    private readonly host: ReplayHost,
    private readonly clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>,
  ) {
    this.frames = recording.frames.flatMap((f): Frame[] => {
      if (f.ch === 'update') return [{ t: f.t, kind: 'update', doc: f.doc, data: new Uint8Array(Buffer.from(f.data, 'base64')) }];
      if (f.ch === 'awareness') return [{ t: f.t, kind: 'awareness', doc: f.doc, client: f.client, state: f.state }];
      return [];
    });
    this.durationMs = this.frames.at(-1)?.t ?? 0;
    this.replayer = new Replayer(recording);
    this.held = this.hold();
    // Paused at the start, showing the files as they were when the recording began.
    this.applyUpTo(0);
  }

  get state(): ReplayState {
    return { playing: this.playing, speed: this.speed, atMs: this.now(), durationMs: this.durationMs, title: this.recording.title };
  }

  play(): ReplayState {
    if (this.closed) return this.state;
    if (this.pausedAt >= this.durationMs) this.seek(0);
    this.base = { atMs: this.pausedAt, wallMs: this.clock.now() };
    this.playing = true;
    this.tick();
    return this.state;
  }

  pause(): ReplayState {
    if (!this.playing) return this.state;
    this.pausedAt = this.now();
    this.playing = false;
    this.cancelTimer();
    this.applyUpTo(this.pausedAt);
    return this.state;
  }

  setSpeed(speed: ReplaySpeed): ReplayState {
    const at = this.now();
    this.speed = speed;
    if (this.playing) {
      this.base = { atMs: at, wallMs: this.clock.now() };
      this.cancelTimer();
      this.tick();
    } else this.pausedAt = at;
    return this.state;
  }

  /** Moves the replay to `atMs` (clamped), playing on from there if it was playing. */
  seek(atMs: number): ReplayState {
    if (this.closed) return this.state;
    const target = Math.max(0, Math.min(this.durationMs, Math.round(atMs)));
    this.cancelTimer();
    if (target < this.appliedUpTo()) this.rewind(target);
    else this.applyUpTo(target);
    this.pausedAt = target;
    this.base = { atMs: target, wallMs: this.clock.now() };
    if (this.playing) this.tick();
    return this.state;
  }

  close(): void {
    this.closed = true;
    this.playing = false;
    this.cancelTimer();
    this.held.release();
  }

  private now(): number {
    if (!this.playing) return this.pausedAt;
    return Math.min(this.durationMs, this.base.atMs + (this.clock.now() - this.base.wallMs) * this.speed);
  }

  /** The time of the last frame applied (-1: none). */
  private appliedUpTo(): number {
    return this.next === 0 ? -1 : this.frames[this.next - 1]!.t;
  }

  private tick(): void {
    this.timer = null;
    if (!this.playing || this.closed) return;
    const at = this.now();
    this.applyUpTo(at);
    if (this.next >= this.frames.length) {
      this.pausedAt = this.durationMs;
      this.playing = false;
      return;
    }
    const waitMs = Math.max(0, (this.frames[this.next]!.t - at) / this.speed);
    this.timer = this.clock.setTimeout(() => this.tick(), waitMs);
  }

  private cancelTimer(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private applyUpTo(atMs: number): void {
    while (this.next < this.frames.length && this.frames[this.next]!.t <= atMs) this.apply(this.frames[this.next++]!);
  }

  private apply(frame: Frame): void {
    if (frame.kind === 'update') return this.write(frame.doc, frame.data);
    const live = this.held.room.doc(frame.doc);
    if (!live) return;
    live.broadcastAwareness([live.awareness.set(frame.client, frame.state, recordedOwner)], null);
  }

  private write(docId: string, data: Uint8Array): void {
    const room = this.held.room;
    const live = room.doc(docId);
    if (!live) {
      const queue = this.waiting.get(docId) ?? [];
      queue.push(data);
      this.waiting.set(docId, queue);
      return;
    }
    this.written.add(docId);
    Y.applyUpdate(live.doc, data, GATEWAY_ORIGIN);
    if (this.waiting.size === 0 || docId !== '~index') return;
    // The index lists new files now: what waited for them is written.
    for (const [waitingId, queue] of [...this.waiting]) {
      const file = room.doc(waitingId);
      if (!file) continue;
      this.waiting.delete(waitingId);
      this.written.add(waitingId);
      for (const update of queue) Y.applyUpdate(file.doc, update, GATEWAY_ORIGIN);
    }
  }

  /**
   * Back to `atMs`: the documents are emptied (the room goes and comes back empty; tabs reload),
   * then each gets its state at that moment as one update, and the recorded cursors as they were.
   */
  private rewind(atMs: number): void {
    this.host.clearDocs(this.workspaceId, [...this.written, '~index', '~thread']);
    this.written.clear();
    this.waiting.clear();
    this.held = this.hold();
    const docs = this.replayer.seek(atMs);
    const index = docs.get('~index');
    if (index) this.write('~index', Y.encodeStateAsUpdate(index));
    for (const [docId, doc] of docs) if (docId !== '~index') this.write(docId, Y.encodeStateAsUpdate(doc));
    this.next = 0;
    const cursors = new Map<string, Extract<Frame, { kind: 'awareness' }>>();
    while (this.next < this.frames.length && this.frames[this.next]!.t <= atMs) {
      const frame = this.frames[this.next++]!;
      if (frame.kind === 'awareness') cursors.set(`${frame.client} ${frame.doc}`, frame);
    }
    for (const frame of cursors.values()) if (frame.state !== null) this.apply(frame);
  }

  private hold(): { room: Room; release(): void } {
    const held = this.host.holdRoom(this.workspaceId);
    if (!held) throw new Error(`replay: workspace ${this.workspaceId} is gone`);
    return held;
  }
}
