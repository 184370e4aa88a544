import { hunksOf, type HunkRecord } from '@flint/change-set';
import type { DocHandle, FlintClient } from '@flint/client';
import {
  MAX_THREAD_MENTIONS,
  MAX_THREAD_MESSAGE,
  readThread,
  THREAD_DOC_ID,
  THREAD_FILE_OPS_KEY,
  type AgentRoute,
  type ThreadFileOp,
  type ThreadMessage,
  type ThreadTurnRecord,
} from '@flint/protocol';
import type * as Y from 'yjs';
import { create } from 'zustand';
import type { RouteModels } from '../api/workspaceApi';
import { describeThreadFailure } from './agentMessages';
import { requireClient, selectCanEdit, useConnection } from './connectionStore';
import { openFileAt, showNotice, useWorkspace } from './workspaceStore';

/** The bundled demo model's name: it fills in code-looking text and follows no instruction. */
export const DEMO_MODEL = 'flint-tiny';

/** What a turn's hunks in one file are now, for files this tab has loaded. */
export interface FileReview {
  pending: number;
  accepted: number;
  rejected: number;
}

interface ThreadState {
  /** The thread doc has arrived once: before that an empty thread means "not known yet". */
  synced: boolean;
  /** Oldest first. A message keeps its object while it does not change, so rows can memo on it. */
  messages: readonly ThreadMessage[];
  /** By turnId, oldest first. */
  turns: ReadonlyMap<string, ThreadTurnRecord>;
  /** By `reviewKey(turnId, fileId)`. A file whose doc this tab has not loaded has none. */
  reviews: ReadonlyMap<string, FileReview>;
  panelOpen: boolean;
  /** Bumped to move the keyboard into the panel's input. */
  inputFocusRequest: number;
  /** The route the panel sends to; remembered across reloads. */
  route: AgentRoute;
  sending: boolean;
  /** The last refused send, stop or review, as a sentence; shown by the input. */
  error: string | null;
  models: RouteModels | null;
}

const panelKey = 'flint.agentPanel';
const routeKey = 'flint.threadRoute';

function stored(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null; // storage disabled: the defaults hold
  }
}

function store(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    // Not persisted; the choice still holds in this tab.
  }
}

export const useThread = create<ThreadState>(() => ({
  synced: false,
  messages: [],
  turns: new Map(),
  reviews: new Map(),
  panelOpen: stored(panelKey) === 'open',
  inputFocusRequest: 0,
  route: stored(routeKey) === 'deep' ? 'deep' : 'fast',
  sending: false,
  error: null,
  models: null,
}));

export const reviewKey = (turnId: string, fileId: string) => `${turnId}/${fileId}`;

/** Calls `run` once, soon; a batch of doc updates is read in one go. */
export type Scheduler = (run: () => void) => void;

/** The next animation frame; a hidden tab gets none, so a timer stands in. */
const nextFrame: Scheduler = (run) => {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    cancelAnimationFrame(frame);
    clearTimeout(timer);
    run();
  };
  const frame = requestAnimationFrame(once);
  const timer = setTimeout(once, 100);
};

export interface ThreadMirror {
  /** Counts the turns' hunks again (a file was reviewed, loaded or synced). */
  refreshReviews(): void;
  dispose(): void;
}

/**
 * Mirrors a thread doc into the store. The model's answer grows every ~8 ms; the doc is read
 * at most once per `schedule` callback (a frame), however many updates arrived, and messages
 * that did not change keep their objects, so only the one streaming re-renders.
 * `hunkDoc` gives the loaded, synced doc of a file, for the turns' review state.
 */
export function mirrorThread(doc: Y.Doc, schedule: Scheduler, hunkDoc: (fileId: string) => Y.Doc | null = () => null): ThreadMirror {
  let threadDirty = true;
  let reviewsDirty = true;
  let scheduled = false;
  let disposed = false;
  const watched = new WeakSet<Y.Map<HunkRecord>>();
  let fileOps: ThreadFileOp[] = [];
  const onHunks = () => {
    reviewsDirty = true;
    request();
  };
  const hunksIn = (fileId: string) => {
    const fileDoc = hunkDoc(fileId);
    if (!fileDoc) return null;
    const map = hunksOf(fileDoc);
    if (!watched.has(map)) {
      watched.add(map);
      map.observe(onHunks);
    }
    return map;
  };
  const flush = () => {
    scheduled = false;
    if (disposed) return;
    const state = useThread.getState();
    const patch: Partial<ThreadState> = {};
    if (threadDirty) {
      threadDirty = false;
      const view = readThread(doc);
      if (!sameFileOps(fileOps, view.fileOps)) reviewsDirty = true;
      fileOps = view.fileOps;
      const messages = shareMessages(state.messages, view.messages);
      const turns = shareTurns(state.turns, view.turns);
      if (messages !== state.messages) patch.messages = messages;
      if (turns !== state.turns) {
        patch.turns = turns;
        reviewsDirty = true;
      }
    }
    if (reviewsDirty) {
      reviewsDirty = false;
      const reviews = countReviews(patch.turns ?? state.turns, hunksIn, fileOps);
      if (!sameReviews(state.reviews, reviews)) patch.reviews = reviews;
    }
    if (Object.keys(patch).length > 0) useThread.setState(patch);
  };
  const request = () => {
    if (scheduled || disposed) return;
    scheduled = true;
    schedule(flush);
  };
  const onUpdate = () => {
    threadDirty = true;
    request();
  };
  doc.on('update', onUpdate);
  request();
  return {
    refreshReviews: onHunks,
    dispose() {
      disposed = true;
      doc.off('update', onUpdate);
    },
  };
}

function sameMessage(a: ThreadMessage, b: ThreadMessage): boolean {
  const keys = Object.keys(a) as Array<keyof ThreadMessage>;
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (a[key] === b[key]) continue;
    if (key !== 'author' || a.author?.name !== b.author?.name || a.author?.color !== b.author?.color) return false;
  }
  return true;
}

/** `next`, with the objects of `previous` wherever a message did not change; `previous` itself if none did. */
function shareMessages(previous: readonly ThreadMessage[], next: readonly ThreadMessage[]): readonly ThreadMessage[] {
  let changed = previous.length !== next.length;
  const byId = new Map(previous.map((message) => [message.id, message]));
  const shared = next.map((message, index) => {
    const old = byId.get(message.id);
    if (old && sameMessage(old, message)) {
      changed ||= previous[index] !== old;
      return old;
    }
    changed = true;
    return message;
  });
  return changed ? shared : previous;
}

/** Turn records are replaced whole on change, so an unchanged one is the same object. */
function shareTurns(previous: ReadonlyMap<string, ThreadTurnRecord>, next: readonly ThreadTurnRecord[]): ReadonlyMap<string, ThreadTurnRecord> {
  const old = [...previous.values()];
  if (old.length === next.length && next.every((turn, index) => old[index] === turn)) return previous;
  return new Map(next.map((turn) => [turn.turnId, turn]));
}

const sameFileOps = (a: readonly ThreadFileOp[], b: readonly ThreadFileOp[]) => a.length === b.length && a.every((op, i) => op.opId === b[i]!.opId && op.status === b[i]!.status);

function countReviews(turns: ReadonlyMap<string, ThreadTurnRecord>, hunksIn: (fileId: string) => Y.Map<HunkRecord> | null, fileOps: readonly ThreadFileOp[] = []): Map<string, FileReview> {
  const reviews = new Map<string, FileReview>();
  // A file the turn created and a reviewer rejected has left the tree (and maybe this tab): it
  // reads as rejected, its hunks untouched, so that undoing the rejection brings it back whole.
  for (const op of fileOps) {
    if (op.kind !== 'create' || op.status !== 'rejected') continue;
    for (const [, entry] of op.entries) if (entry.kind === 'file') reviews.set(reviewKey(op.turnId, entry.fileId), { pending: 0, accepted: 0, rejected: 1 });
  }
  /** fileId → its hunk records; null: the file's doc is not here, so its state is unknown. */
  const byFile = new Map<string, HunkRecord[] | null>();
  for (const turn of turns.values()) {
    for (const file of turn.files) {
      if (file.deleted || reviews.has(reviewKey(turn.turnId, file.fileId))) continue;
      let records = byFile.get(file.fileId);
      if (records === undefined) {
        const map = hunksIn(file.fileId);
        records = map ? [...map.values()] : null;
        byFile.set(file.fileId, records);
      }
      if (records === null) continue;
      const review: FileReview = { pending: 0, accepted: 0, rejected: 0 };
      for (const record of records) if (record.turnId === turn.turnId) review[record.status]++;
      reviews.set(reviewKey(turn.turnId, file.fileId), review);
    }
  }
  return reviews;
}

function sameReviews(a: ReadonlyMap<string, FileReview>, b: ReadonlyMap<string, FileReview>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, x] of a) {
    const y = b.get(key);
    if (!y || x.pending !== y.pending || x.accepted !== y.accepted || x.rejected !== y.rejected) return false;
  }
  return true;
}

let mirror: ThreadMirror | null = null;

/**
 * Opens the workspace's thread with the connection and mirrors it into the store for as long
 * as the client lives (which models serve the routes: modelConnectionStore).
 */
export function bindThread(client: FlintClient, schedule: Scheduler = nextFrame): void {
  const thread = client.openThread();
  const waiting = new WeakSet<DocHandle>();
  const hunkDoc = (fileId: string) => {
    const handle = client.getDoc(fileId);
    if (!handle) return null;
    if (handle.synced) return handle.doc;
    if (!waiting.has(handle)) {
      waiting.add(handle);
      void handle.whenSynced().then(() => mirror?.refreshReviews());
    }
    return null;
  };
  mirror?.dispose();
  mirror = mirrorThread(thread.doc, schedule, hunkDoc);
  void thread.whenSynced().then(() => useThread.setState({ synced: true }));
  // The editor opens and closes files with tabs: a turn's file may become countable.
  useWorkspace.subscribe((state, previous) => {
    if (state.tabs !== previous.tabs || state.pathById !== previous.pathById) mirror?.refreshReviews();
  });
}

/** A turn's messages in the order they were written: its prompt, steers, answers, tool steps, notices. */
export interface TurnGroup {
  key: string;
  turnId: string;
  messages: ThreadMessage[];
}

/**
 * The thread as the panel lays it out: one group per turn, in the order turns began (a
 * message queued during a turn sits in the array before that turn's later steps; grouping
 * keeps each turn whole), and the messages still queued, which wait at the end.
 */
export function groupByTurn(messages: readonly ThreadMessage[]): { groups: TurnGroup[]; queued: ThreadMessage[] } {
  const groups: TurnGroup[] = [];
  const byTurn = new Map<string, TurnGroup>();
  const queued: ThreadMessage[] = [];
  for (const message of messages) {
    if (message.queued) {
      queued.push(message);
      continue;
    }
    const key = message.turnId || `message:${message.id}`;
    let group = byTurn.get(key);
    if (!group) {
      group = { key, turnId: message.turnId, messages: [] };
      byTurn.set(key, group);
      groups.push(group);
    }
    group.messages.push(message);
  }
  return { groups, queued };
}

/** The thread's turn that is streaming now, if any (the gateway runs one at a time). */
export function selectStreamingTurn(state: ThreadState): ThreadTurnRecord | null {
  let found: ThreadTurnRecord | null = null;
  for (const turn of state.turns.values()) if (turn.status === 'streaming') found = turn;
  return found;
}

/** The thread's streaming turn if it writes in `fileId` (its hunks there are still growing). */
export function selectThreadWritingIn(state: ThreadState, fileId: string | null): ThreadTurnRecord | null {
  const turn = selectStreamingTurn(state);
  return turn !== null && fileId !== null && turn.files.some((file) => file.fileId === fileId) ? turn : null;
}

/** The model the picked route is served by: as the gateway said, else as its last turn said. */
export function selectRouteModel(state: ThreadState): string | null {
  const configured = state.models?.[state.route];
  if (configured !== undefined && configured !== null) return configured;
  let last: string | null = null;
  for (const turn of state.turns.values()) if (turn.route === state.route) last = turn.model;
  return last;
}

export function selectIsDemoModel(state: ThreadState): boolean {
  return selectRouteModel(state) === DEMO_MODEL;
}

/** Whether this tab may accept or reject a turn's changes now (not while it still writes them). */
export function selectCanReview(state: ThreadState, turnId: string): boolean {
  const turn = state.turns.get(turnId);
  return turn !== undefined && turn.status !== 'streaming' && selectCanEdit(useConnection.getState());
}

export interface ThreadDraft {
  text: string;
  /** 'send': a new turn, or a steer of the streaming one; 'queue': after the streaming one ends. */
  mode: 'send' | 'queue';
  mentions: readonly string[];
  /** The file on screen and its selection, unless the person removed it. */
  selection: { fileId: string; anchor: number; head: number } | null;
}

/** Sends a message to the thread; false (with `error` set) when it was not sent. */
export async function sendToThread(draft: ThreadDraft): Promise<boolean> {
  const text = draft.text.trim();
  if (text === '' || useThread.getState().sending) return false;
  const refuse = (error: string) => {
    useThread.setState({ error });
    return false;
  };
  if (!selectCanEdit(useConnection.getState())) return refuse(describeThreadFailure({ code: 'forbidden', message: '' }));
  if (text.length > MAX_THREAD_MESSAGE) return refuse(`The message is too long (${text.length} characters; at most ${MAX_THREAD_MESSAGE}). Shorten it, or split it in two.`);
  const mentions = [...new Set(draft.mentions)];
  if (mentions.length > MAX_THREAD_MENTIONS) return refuse(`A message can mention at most ${MAX_THREAD_MENTIONS} files; this one mentions ${mentions.length}.`);
  useThread.setState({ sending: true, error: null });
  try {
    const result = await requireClient().threadSend({
      text,
      route: useThread.getState().route,
      mode: draft.mode,
      mentions,
      ...(draft.selection ? { selection: draft.selection } : {}),
    });
    useThread.setState({ error: result.ok ? null : describeThreadFailure(result) });
    return result.ok;
  } finally {
    useThread.setState({ sending: false });
  }
}

/** Esc / Stop: the streaming turn stops; what it wrote stays for review. */
export async function stopThread(): Promise<void> {
  if (!selectCanEdit(useConnection.getState()) || selectStreamingTurn(useThread.getState()) === null) return;
  const result = await requireClient().threadStop();
  // not_found: the turn ended on its own meanwhile, which is what the person wanted anyway.
  if (!result.ok && result.code !== 'not_found') useThread.setState({ error: `Could not stop the agent: ${result.message}` });
}

/** True once the doc is synced; false if the connection drops first. */
function untilSynced(handle: DocHandle): Promise<boolean> {
  if (handle.synced) return Promise.resolve(true);
  if (useConnection.getState().status.kind !== 'open') return Promise.resolve(false);
  return new Promise((resolve) => {
    const stop = useConnection.subscribe((state) => {
      if (state.status.kind === 'open') return;
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
 * Accepts or rejects a turn's changes to one file. Its hunks: one Yjs transaction with the
 * review origin, so the file's undo (FileUndo) takes it back as one step. A file no tab has open
 * is opened and synced first (its hunks live in its doc). Its file operations (created, renamed,
 * deleted by the turn) are the gateway's to change: rejecting a file the turn created deletes
 * it (its hunks stay as they were, so Undo brings it back whole); rejecting a deletion brings
 * the file back, then its hunks are rejected too.
 */
export async function reviewThreadFile(turnId: string, fileId: string, action: 'accept' | 'reject'): Promise<number> {
  if (!selectCanReview(useThread.getState(), turnId)) return 0;
  const ops = fileOpsOf(turnId, fileId);
  let changed = 0;
  if (action === 'reject') {
    // Last first: the file must be where its hunks can be reached, or gone if the turn made it.
    for (const op of ops.reverse()) {
      if (!(await reviewFileOp(turnId, op.opId, 'reject'))) return changed;
      changed++;
      if (op.kind === 'create') return changed;
    }
    return changed + (await reviewHunksIn(turnId, fileId, 'reject'));
  }
  changed += await reviewHunksIn(turnId, fileId, 'accept');
  for (const op of ops) if (await reviewFileOp(turnId, op.opId, 'accept')) changed++;
  return changed;
}

/** Accept all / Reject all of a turn: its file operations (one request), then one step per file (each file has its own undo). */
export async function reviewThreadTurn(turnId: string, action: 'accept' | 'reject'): Promise<number> {
  const turn = useThread.getState().turns.get(turnId);
  if (!turn || !selectCanReview(useThread.getState(), turnId)) return 0;
  let changed = 0;
  const ops = fileOpsOf(turnId);
  const filesOf = (kind: ThreadFileOp['kind']) => new Set(ops.flatMap((op) => (op.kind === kind ? op.entries.flatMap(([, entry]) => (entry.kind === 'file' ? [entry.fileId] : [])) : [])));
  const created = filesOf('create');
  const restored = filesOf('delete');
  if (action === 'reject' && ops.length > 0) {
    if (!(await reviewFileOp(turnId, undefined, 'reject'))) return changed;
    changed += ops.length;
  }
  for (const file of turn.files) {
    // A file the turn created is gone once rejected; one it deleted is back by now.
    if (action === 'reject' ? created.has(file.fileId) || (file.deleted && !restored.has(file.fileId)) : file.deleted) continue;
    changed += await reviewHunksIn(turnId, file.fileId, action);
  }
  if (action === 'accept' && ops.length > 0 && (await reviewFileOp(turnId, undefined, 'accept'))) changed += ops.length;
  return changed;
}

/**
 * Takes back the last review of the turn's file operations on a file (one step): a rejected
 * creation makes the file again, a rejected deletion deletes it again.
 */
export async function undoFileOpReview(turnId: string, fileId: string): Promise<boolean> {
  const doc = requireClient().getDoc(THREAD_DOC_ID)?.doc;
  if (!doc || !selectCanReview(useThread.getState(), turnId)) return false;
  const reviewed = [...doc.getMap<ThreadFileOp>(THREAD_FILE_OPS_KEY).values()]
    .filter((op) => op.turnId === turnId && op.status !== 'pending' && op.entries.some(([, entry]) => entry.kind === 'file' && entry.fileId === fileId))
    .sort((a, b) => b.seq - a.seq);
  return reviewed[0] ? reviewFileOp(turnId, reviewed[0].opId, 'undo') : false;
}

async function reviewHunksIn(turnId: string, fileId: string, action: 'accept' | 'reject'): Promise<number> {
  const client = requireClient();
  const handle = client.getDoc(fileId) ?? client.openDoc(fileId);
  if (!(await untilSynced(handle))) {
    useThread.setState({ error: 'Not connected to the gateway. Review the changes again once the connection is back.' });
    return 0;
  }
  const changed = client.review(fileId, { turnId }, action);
  mirror?.refreshReviews();
  return changed;
}

async function reviewFileOp(turnId: string, opId: string | undefined, action: 'accept' | 'reject' | 'undo'): Promise<boolean> {
  const result = await requireClient().threadReview(turnId, action, opId);
  if (!result.ok) useThread.setState({ error: result.message });
  return result.ok;
}

/** The turn's pending file operations (on `fileId`, if given), in the order they were made. */
function fileOpsOf(turnId: string, fileId?: string): ThreadFileOp[] {
  const doc = requireClient().getDoc(THREAD_DOC_ID)?.doc;
  if (!doc) return [];
  const touches = (op: ThreadFileOp) => fileId === undefined || op.entries.some(([, entry]) => entry.kind === 'file' && entry.fileId === fileId);
  return [...doc.getMap<ThreadFileOp>(THREAD_FILE_OPS_KEY).values()].filter((op) => op.turnId === turnId && op.status === 'pending' && touches(op)).sort((a, b) => a.seq - b.seq);
}

/** Opens a file the thread names (by id, else by path) with the caret on `line`. */
export function openThreadFile(target: { fileId?: string; path?: string }, line = 1): void {
  const { pathById, entries } = useWorkspace.getState();
  const byPath = target.path === undefined ? undefined : entries.get(target.path);
  const fileId = target.fileId !== undefined && pathById.has(target.fileId) ? target.fileId : byPath?.kind === 'file' ? byPath.fileId : null;
  if (fileId === null) {
    showNotice(`${target.path ?? 'This file'} no longer exists.`);
    return;
  }
  openFileAt(fileId, line);
}

export function setAgentPanelOpen(panelOpen: boolean): void {
  store(panelKey, panelOpen ? 'open' : 'closed');
  useThread.setState((state) => ({ panelOpen, inputFocusRequest: state.inputFocusRequest + (panelOpen ? 1 : 0) }));
}

export function requestThreadInputFocus(): void {
  useThread.setState((state) => ({ inputFocusRequest: state.inputFocusRequest + 1 }));
}

export function setThreadRoute(route: AgentRoute): void {
  store(routeKey, route);
  useThread.setState({ route });
}

export function dismissThreadError(): void {
  useThread.setState({ error: null });
}
