import type { Clock } from './ports/Clock';
import type { Extensions } from './Extension';
import type { GatewayConfig } from './GatewayConfig';
import type { LinkService } from './LinkService';
import type { Metrics } from './Metrics';
import type { Log } from './ports/Log';
import type { Random } from './ports/Random';
import type { Room } from './Room';
import type { RoomRegistry } from './RoomRegistry';
import type { Session } from './Session';
import type { TerminalHost } from './TerminalHost';


/** What a session needs of the gateway, passed down instead of the whole Gateway. */
export interface GatewayContext {
  /** This gateway's id (its cluster id; alone, still its own). */
  readonly gatewayId: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly config: GatewayConfig;
  readonly metrics: Metrics;
  readonly links: LinkService;
  readonly rooms: RoomRegistry;
  readonly log: Log;
  /** The features registered as extensions (search, completion, the agent, the thread, …): their namespaces and hooks. */
  readonly extensions: Extensions;
  /** Shared terminals (off when the gateway was given none): `term.*` and the agent's commands. */
  readonly terminals: TerminalHost;
  /** Why a new session of `linkId` from `address` may not open (a cap reached), or null. */
  sessionRefused(linkId: string, address: string): string | null;
  /** Updates waiting in sessions, all together: `take` says whether `bytes` more fit. */
  readonly waiting: { take(bytes: number): boolean; release(bytes: number): void };
  sessionOpened(session: Session): void;
  sessionClosed(session: Session, room: Room): void;
}
