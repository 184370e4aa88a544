import type { Role, ServerMessage, TerminalRequest } from '@flint/protocol';
import type { PeerUser } from './peerPresence';

/** A session as the terminal extension sees it: who it is, and a way to reach its tab. */
export interface TerminalPeer {
  readonly sessionId: string;
  readonly linkId: string;
  readonly role: Role | null;
  readonly user: PeerUser | null;
  sendTerminal(message: ServerMessage): void;
  /** Whether the tab's socket holds more than the terminal may add to it (it would stall edits). */
  terminalBacklogged(): boolean;
}

/**
 * What the kernel asks of shared terminals (apps/gateway/src/terminal): `term.*` messages of a
 * session in a workspace, and the lifecycle around them. The kernel never imports the
 * implementation; a gateway without one has terminals off.
 */
export interface TerminalHost {
  /** A session joined the workspace, or changed the name it shows as. */
  joined(peer: TerminalPeer, workspaceId: string): void;
  handle(message: TerminalRequest, peer: TerminalPeer, workspaceId: string): void;
  left(peer: TerminalPeer, workspaceId: string): void;
  /**
   * The agent's `run_command` ([P45]): asks, as the workspace's policy says, then runs it in the
   * sandbox in a terminal everyone may watch. `signal` (the turn's Stop) kills it.
   */
  runCommand(request: CommandRequest): Promise<CommandOutcome>;
  close(): Promise<void>;
}

export interface CommandRequest {
  workspaceId: string;
  command: string;
  turnId: string;
  signal: AbortSignal;
}

export type CommandOutcome =
  | { ran: false; reason: string }
  /** `output`: head and tail, with what was cut counted, escape sequences removed. */
  | { ran: true; approvedBy: string; exitCode: number | null; output: string; stopped: boolean };

export const terminalsOff: TerminalHost = {
  joined: () => {},
  handle: (message, peer) => {
    if ('requestId' in message) peer.sendTerminal({ type: 'result', requestId: message.requestId, ok: false, code: 'not_configured', message: 'This gateway runs no terminals.' });
  },
  left: () => {},
  runCommand: async () => ({ ran: false, reason: 'This gateway runs no commands (it has no terminals).' }),
  close: async () => {},
};
