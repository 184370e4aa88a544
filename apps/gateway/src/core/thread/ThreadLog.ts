import {
  THREAD_MESSAGES_KEY,
  THREAD_TURNS_KEY,
  type ThreadMessage,
  type ThreadTurnRecord,
} from '@flint/protocol';
import * as Y from 'yjs';
import type { Random } from '../ports/Random';
import { GATEWAY_ORIGIN } from '../LiveDoc';

/** A message's fields as written, `text` aside (it is a Y.Text). */
export type MessageFields = Omit<ThreadMessage, 'id' | 'text' | 'at' | 'author'> & Partial<Pick<ThreadMessage, 'author'>>;

/**
 * Writes the agent thread's doc: every change is a gateway transaction, so it is persisted and
 * broadcast like any file's update. Messages are Y.Maps in one array; a message's text is a
 * Y.Text so the model's answer streams in as appends, not as a rewritten string.
 */
export class ThreadLog {
  private readonly messages: Y.Array<Y.Map<unknown>>;
  private readonly turns: Y.Map<ThreadTurnRecord>;

  constructor(
    readonly doc: Y.Doc,
    private readonly now: () => number,
    private readonly random: Random,
  ) {
    this.messages = doc.getArray<Y.Map<unknown>>(THREAD_MESSAGES_KEY);
    this.turns = doc.getMap<ThreadTurnRecord>(THREAD_TURNS_KEY);
  }

  /** Appends a message; returns its id. */
  append(fields: MessageFields, text = ''): string {
    const id = this.random.id('m');
    const entry = new Y.Map<unknown>();
    this.transact(() => {
      for (const [key, value] of Object.entries({ ...fields, id, at: this.now(), author: fields.author ?? null })) {
        if (value !== undefined) entry.set(key, value);
      }
      const body = new Y.Text();
      if (text) body.insert(0, text);
      entry.set('text', body);
      this.messages.push([entry]);
    });
    return id;
  }

  /** Adds text at the end of a message (the model's answer as it streams). */
  appendText(id: string, text: string): void {
    if (!text) return;
    const body = this.find(id)?.get('text');
    if (body instanceof Y.Text) this.transact(() => body.insert(body.length, text));
  }

  /** Sets fields of a message (a tool step's status, a queued message sent). */
  update(id: string, fields: Partial<MessageFields>): void {
    const entry = this.find(id);
    if (!entry) return;
    this.transact(() => {
      for (const [key, value] of Object.entries(fields)) {
        if (value === undefined) entry.delete(key);
        else entry.set(key, value);
      }
    });
  }

  text(id: string): string {
    const body = this.find(id)?.get('text');
    return body instanceof Y.Text ? body.toString() : '';
  }

  setTurn(record: ThreadTurnRecord): void {
    this.transact(() => this.turns.set(record.turnId, record));
  }

  turn(turnId: string): ThreadTurnRecord | null {
    return this.turns.get(turnId) ?? null;
  }

  /** Every message, oldest first, as plain values (for the prompt). */
  entries(): Array<{ id: string; fields: Record<string, unknown>; text: string }> {
    return this.messages.toArray().map((entry) => {
      const body = entry.get('text');
      return { id: String(entry.get('id')), fields: Object.fromEntries(entry.entries()), text: body instanceof Y.Text ? body.toString() : '' };
    });
  }

  /**
   * The messages sent so far, as the model should read them: turn by turn in the order turns
   * began, each turn's messages in the order written. A message queued during a turn sits in the
   * array before that turn's later answers, and one still queued is not sent yet: grouping puts the
   * first after the answer it waited for, and the second is left out (the web's `groupByTurn`).
   */
  transcript(): ReturnType<ThreadLog['entries']> {
    const turns = new Map<string, ReturnType<ThreadLog['entries']>>();
    for (const entry of this.entries()) {
      if (entry.fields.queued) continue;
      const key = typeof entry.fields.turnId === 'string' && entry.fields.turnId ? entry.fields.turnId : `message:${entry.id}`;
      const turn = turns.get(key);
      if (turn) turn.push(entry);
      else turns.set(key, [entry]);
    }
    return [...turns.values()].flat();
  }

  allTurns(): ThreadTurnRecord[] {
    return [...this.turns.values()].sort((a, b) => a.startedAt - b.startedAt);
  }

  /**
   * Turns the thread still shows as streaming whose gateway is gone (`isGone`: this one before a
   * restart, or another of the cluster that stopped) end as failed, saying what happened to
   * their edits. Returns whether any did.
   */
  closeInterrupted(isGone: (turn: ThreadTurnRecord) => boolean, message = 'The gateway restarted while this turn ran. What it wrote before that is in the files for review.'): boolean {
    const stale = [...this.turns.values()].filter((turn) => turn.status === 'streaming' && isGone(turn));
    if (stale.length === 0) return false;
    this.transact(() => {
      for (const turn of stale) {
        this.turns.set(turn.turnId, { ...turn, status: 'failed', endedAt: this.now(), error: { code: 'internal', message } });
        for (const entry of this.messages) if (entry.get('turnId') === turn.turnId && entry.get('status') === 'running') entry.set('status', 'failed');
      }
    });
    this.append({ kind: 'notice', turnId: stale[stale.length - 1]!.turnId, level: 'error' }, message);
    return true;
  }

  private find(id: string): Y.Map<unknown> | null {
    // Recent messages are the ones written to: search from the end.
    for (let i = this.messages.length - 1; i >= 0; i--) {
      const entry = this.messages.get(i);
      if (entry.get('id') === id) return entry;
    }
    return null;
  }

  private transact(write: () => void): void {
    this.doc.transact(write, GATEWAY_ORIGIN);
  }
}
