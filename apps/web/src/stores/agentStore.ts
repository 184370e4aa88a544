import { hunksOf } from '@flint/change-set';
import type { FlintClient } from '@flint/client';
import type { AgentRoute, TurnInfo } from '@flint/protocol';
import { create } from 'zustand';
import type { Problem } from '../editor/problemsDiff';
import { describePromptFailure } from './agentMessages';
import { requireClient, selectCanEdit, useConnection } from './connectionStore';
import { showNotice } from './workspaceStore';

/** Pending hunks of the file on screen, as the editor last counted them. */
export interface ReviewSummary {
  fileId: string;
  /** Hunks that can be accepted or rejected now (their turn has stopped writing). */
  reviewable: number;
}

/** A problem the pending changes added, where it is in the file now. */
export interface AddedProblem extends Problem {
  line: number;
}

/** What the pending changes of the file on screen do to its TypeScript problems. */
export interface ReviewProblems {
  fileId: string;
  added: AddedProblem[];
  fixed: Problem[];
}

interface AgentState {
  /** Every turn this tab has heard of, latest state each. Replaced (never mutated) on change. */
  turns: ReadonlyMap<string, TurnInfo>;
  /** The route the inline prompt sends to; remembered across reloads. */
  route: AgentRoute;
  /** Failed turns whose error the user closed. */
  dismissedErrors: ReadonlySet<string>;
  review: ReviewSummary | null;
  /** Null until checked, and for files that are not TypeScript. */
  problems: ReviewProblems | null;
  /** A problem the editor should put the caret on (an index into `problems.added`). */
  revealRequest: { fileId: string; problem: number; nonce: number } | null;
}

const routeKey = 'flint.agentRoute';

function storedRoute(): AgentRoute {
  try {
    return localStorage.getItem(routeKey) === 'deep' ? 'deep' : 'fast';
  } catch {
    return 'fast'; // storage disabled: the default route is right
  }
}

export const useAgent = create<AgentState>(() => ({
  turns: new Map(),
  route: storedRoute(),
  dismissedErrors: new Set(),
  review: null,
  problems: null,
  revealRequest: null,
}));

/**
 * Mirrors the room's turns into the store. The gateway reports a streaming turn on every flush
 * (~8 ms); the store takes its progress at most once per animation frame, so the HUD
 * re-renders at the display rate, not the token rate.
 */
export function bindAgent(client: FlintClient): void {
  const pending = new Map<string, TurnInfo>(client.turns);
  let frame: number | null = null;
  const flush = () => {
    frame = null;
    if (pending.size === 0) return;
    const batch = [...pending.values()];
    pending.clear();
    useAgent.setState((state) => {
      const turns = new Map(state.turns);
      for (const turn of batch) turns.set(turn.turnId, turn);
      return { turns };
    });
  };
  client.onTurn((turn) => {
    pending.set(turn.turnId, turn);
    // A turn starting or ending changes what keys do (Esc stops it): that must not wait a frame.
    if (useAgent.getState().turns.get(turn.turnId)?.status !== turn.status) {
      if (frame !== null) cancelAnimationFrame(frame);
      flush();
    } else frame ??= requestAnimationFrame(flush);
  });
  client.onStatus((status) => {
    if (status.kind === 'open') return;
    // The end of a turn that finishes while we are away is never replayed; a turn still
    // streaming reports itself again on its next flush after the reconnect.
    useAgent.setState((state) => {
      const turns = new Map([...state.turns].filter(([, turn]) => turn.status !== 'streaming'));
      return turns.size === state.turns.size ? state : { turns };
    });
  });
  flush();
}

export function setRoute(route: AgentRoute): void {
  try {
    localStorage.setItem(routeKey, route);
  } catch {
    // Not persisted; the choice still holds in this tab.
  }
  useAgent.setState({ route });
}

export type PromptOutcome = { ok: true; turnId: string | null } | { ok: false; error: string };

/**
 * Asks the agent to rewrite [anchor, head) of a file (equal offsets: that line). Resolves
 * once the turn started, or with the sentence to show in the prompt box.
 */
export async function submitPrompt(request: { fileId: string; anchor: number; head: number; instruction: string }): Promise<PromptOutcome> {
  // While the agent writes in this file, a new instruction steers that turn (DESIGN §5.7).
  const streaming = selectStreamingTurn(useAgent.getState(), request.fileId);
  const result = streaming
    ? await requireClient().steerTurn(streaming.turnId, request.instruction)
    : await requireClient().prompt({ ...request, route: useAgent.getState().route });
  return result.ok ? { ok: true, turnId: result.turnId ?? null } : { ok: false, error: describePromptFailure(result) };
}

/** Esc / Stop: interrupts a turn; what it wrote stays for review. */
export async function stopTurn(turnId: string): Promise<void> {
  const result = await requireClient().cancelTurn(turnId);
  // not_found: the turn ended on its own meanwhile, which is what the user wanted anyway.
  if (!result.ok && result.code !== 'not_found') showNotice(`Could not stop the agent: ${result.message}`);
}

/** Esc: stops the turn writing in a file, if this tab may; says whether there was one to stop. */
export function stopStreamingIn(fileId: string): boolean {
  if (!selectCanEdit(useConnection.getState())) return false;
  const turn = selectStreamingTurn(useAgent.getState(), fileId);
  if (turn) void stopTurn(turn.turnId);
  return turn !== null;
}

/** Accepts or rejects one hunk: one Yjs transaction, so one undo step. */
export function reviewHunk(fileId: string, action: 'accept' | 'reject', hunkId: string): number {
  return requireClient().review(fileId, { hunkId }, action);
}

/**
 * Accept all / Reject all: every pending hunk of a file, except those of a turn still writing
 * there (they can still grow). One transaction per turn, so normally one undo step.
 */
export function reviewFile(fileId: string, action: 'accept' | 'reject'): number {
  const client = requireClient();
  const doc = client.getDoc(fileId)?.doc;
  if (!doc) return 0;
  const streaming = selectStreamingTurn(useAgent.getState(), fileId)?.turnId;
  const turnIds = new Set<string>();
  for (const record of hunksOf(doc).values()) if (record.status === 'pending' && record.turnId !== streaming) turnIds.add(record.turnId);
  let changed = 0;
  for (const turnId of turnIds) changed += client.review(fileId, { turnId }, action);
  return changed;
}

export function setReviewSummary(review: ReviewSummary | null): void {
  const current = useAgent.getState().review;
  if (current?.fileId === review?.fileId && current?.reviewable === review?.reviewable) return;
  useAgent.setState({ review });
}

export function setReviewProblems(problems: ReviewProblems | null): void {
  if (problems === null && useAgent.getState().problems === null) return;
  useAgent.setState({ problems });
}

/** Puts the caret of the editor showing `fileId` on a problem its pending changes added. */
export function revealProblem(fileId: string, problem: number): void {
  useAgent.setState((state) => ({ revealRequest: { fileId, problem, nonce: (state.revealRequest?.nonce ?? 0) + 1 } }));
}

export function dismissTurnError(turnId: string): void {
  useAgent.setState((state) => ({ dismissedErrors: new Set(state.dismissedErrors).add(turnId) }));
}

/** The turn writing into a file now, if any (the gateway allows one per file). */
export function selectStreamingTurn(state: AgentState, fileId: string | null): TurnInfo | null {
  if (fileId === null) return null;
  for (const turn of state.turns.values()) if (turn.fileId === fileId && turn.status === 'streaming') return turn;
  return null;
}

function latest(turns: Iterable<TurnInfo>, accept: (turn: TurnInfo) => boolean): TurnInfo | null {
  let found: TurnInfo | null = null;
  for (const turn of turns) if (accept(turn) && (found === null || turn.startedAt > found.startedAt)) found = turn;
  return found;
}

/** What the HUD shows: the active file's current or last turn, else the workspace's last. */
export function selectHudTurn(state: AgentState, fileId: string | null): TurnInfo | null {
  return (
    selectStreamingTurn(state, fileId) ??
    latest(state.turns.values(), (turn) => turn.fileId === fileId) ??
    latest(state.turns.values(), () => true)
  );
}

/** The failure to show: the last failed turn not dismissed and not followed by a newer try. */
export function selectErrorTurn(state: AgentState): TurnInfo | null {
  const failed = latest(state.turns.values(), (turn) => turn.status === 'failed' && turn.error !== null);
  if (!failed || state.dismissedErrors.has(failed.turnId)) return null;
  const retried = latest(state.turns.values(), (turn) => turn.fileId === failed.fileId && turn.startedAt > failed.startedAt);
  return retried ? null : failed;
}
