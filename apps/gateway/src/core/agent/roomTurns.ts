import type { TurnInfo } from '@flint/protocol';
import type { Room, RoomWriter } from '../Room';
import type { ThreadTurn } from '../thread/ThreadTurn';
import type { Turn } from './Turn';

/** The agent's turns in one room: the agent's state, not the kernel's (decision 0029). */
export interface RoomTurns {
  /** Inline turns streaming into this workspace's files now, on this gateway. */
  readonly inline: Map<string, Turn>;
  /** Inline turns streaming on other gateways of the cluster, with the gateway running each. */
  readonly remote: Map<string, { gateway: string; turn: TurnInfo }>;
  /** The thread's turn streaming here now (one at a time per workspace). */
  thread: ThreadTurn | null;
}

/** Per room, for as long as the room lives: a room that leaves memory takes its entry with it. */
const byRoom = new WeakMap<Room, RoomTurns>();

/**
 * The agent's turns in `room`, made on first use. The room knows them only as a `RoomWriter`:
 * it keeps the docs they write in loaded, tells them of deleted files and stops them before its
 * docs go.
 */
export function turnsOf(room: Room): RoomTurns {
  let turns = byRoom.get(room);
  if (turns) return turns;
  const state: RoomTurns = { inline: new Map(), remote: new Map(), thread: null };
  const writer: RoomWriter = {
    writesIn: (fileId) => [...state.inline.values()].some((turn) => turn.snapshot.fileId === fileId) || state.thread?.snapshot.agentClients[fileId] !== undefined,
    writing: () => [...[...state.inline.values()].map((turn) => turn.snapshot.turnId), ...(state.thread ? [state.thread.turnId] : [])],
    filesDeleted: (fileIds) => {
      // Before the docs go: a turn ending takes its agent's cursor out of its doc.
      for (const turn of [...state.inline.values()]) if (fileIds.includes(turn.snapshot.fileId)) turn.fileDeleted();
      for (const fileId of fileIds) state.thread?.fileDeleted(fileId);
    },
    stop: () => {
      for (const turn of [...state.inline.values()]) turn.cancel();
      state.thread?.stopNow();
    },
  };
  room.writers.add(writer);
  byRoom.set(room, (turns = state));
  return turns;
}
