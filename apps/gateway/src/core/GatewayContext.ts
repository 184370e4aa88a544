import type { AgentService } from './agent/AgentService';
import type { Clock } from './Clock';
import type { CompletionService } from './complete/CompletionService';
import type { GatewayConfig } from './GatewayConfig';
import type { LinkService } from './LinkService';
import type { Metrics } from './Metrics';
import type { Room } from './Room';
import type { RoomRegistry } from './RoomRegistry';
import type { WorkspaceSearch } from './search/WorkspaceSearch';
import type { Session } from './Session';
import type { TerminalHost } from './TerminalHost';
import type { ThreadService } from './thread/ThreadService';

export type LogLevel = 'info' | 'warn' | 'error';
export type Log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

/** What a session needs of the gateway, passed down instead of the whole Gateway. */
export interface GatewayContext {
  /** This gateway's id (its cluster id; alone, still its own). */
  readonly gatewayId: string;
  readonly clock: Clock;
  readonly config: GatewayConfig;
  readonly metrics: Metrics;
  readonly links: LinkService;
  readonly rooms: RoomRegistry;
  readonly log: Log;
  readonly agent: AgentService;
  readonly thread: ThreadService;
  readonly completions: CompletionService;
  readonly search: WorkspaceSearch;
  /** Shared terminals (an extension; off when the gateway was given none). */
  readonly terminals: TerminalHost;
  /** Why a new session of `linkId` from `address` may not open (a cap reached), or null. */
  sessionRefused(linkId: string, address: string): string | null;
  /** Updates waiting in sessions, all together: `take` says whether `bytes` more fit. */
  readonly waiting: { take(bytes: number): boolean; release(bytes: number): void };
  sessionOpened(session: Session): void;
  sessionClosed(session: Session, room: Room): void;
}
