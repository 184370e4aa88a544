import type { AwarenessEntry } from './AwarenessRelay';
import type { LiveDoc } from './LiveDoc';
import type { PeerUser } from './peerPresence';

/** What a live document needs of a session: somewhere to send frames, and who it is. */
export interface Subscriber {
  readonly sessionId: string;
  readonly linkId: string;
  send(frame: Uint8Array): void;
}

/**
 * A session as its room and documents see it. Changes come through these rather than `send`,
 * so a session whose socket is not keeping up can hold them back and catch up in one frame.
 */
export interface RoomSession extends Subscriber {
  /** Who the session shows as to the others, once it announced itself. */
  readonly user: PeerUser | null;
  /** `frame` carries an update of `doc` (stored already); `before`: the doc's state vector before it. */
  sendUpdate(doc: LiveDoc, frame: Uint8Array, before: Map<number, number>): void;
  /** `frame` carries `entries`, changed cursors and presence of `doc`. */
  sendAwareness(doc: LiveDoc, frame: Uint8Array, entries: AwarenessEntry[]): void;
  /** `frame` carries the status of turn `turnId`; only its latest matters to the client. */
  sendTurn(turnId: string, frame: Uint8Array): void;
  /** Ends the session with a close code (SPEC §Close codes). */
  close(code: number, reason: string): void;
}
