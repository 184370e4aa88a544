import type { ThreadAuthor, ThreadRequest, TurnInfo } from '@flint/protocol';

/** A cursor or presence state as it crosses gateways: with the link that owns it. */
export interface RemoteAwarenessEntry {
  clientId: number;
  clock: number;
  /** 'null' removes the state. */
  stateJson: string;
  linkId: string;
}

/**
 * What a gateway tells the others about one workspace (docs/decisions/0024). Every accepted
 * change is stored by the gateway that accepted it *before* it publishes it, so a gateway that
 * loads a document from the store and then hears what comes next misses nothing.
 */
export type WorkspaceMessage =
  /** A document update, stored already. */
  | { kind: 'update'; docId: string; update: Uint8Array }
  /**
   * "This is my state vector of the doc: send what I lack" (a doc just loaded, a room followed, a
   * reconnect). Answered with an update and, unless it is itself an `answer`, a sync back: a
   * state vector does not show deletions, so each side sends its delete set either way.
   */
  | { kind: 'sync'; docId: string; stateVector: Uint8Array; answer?: boolean }
  | { kind: 'awareness'; docId: string; entries: RemoteAwarenessEntry[] }
  /** An inline agent turn's status, for the sessions on other gateways. */
  | { kind: 'turn'; turn: TurnInfo }
  /** Stop or steer an inline turn that runs on `gateway` (a session elsewhere pressed Esc). */
  | { kind: 'agent'; gateway: string; turnId: string; action: 'cancel' | 'steer'; instruction: string }
  /** A thread message or Stop for the thread turn that runs on `gateway`. */
  | { kind: 'thread'; gateway: string; request: ThreadRequest; linkId: string; author: ThreadAuthor };

/** What a gateway tells every other gateway. */
export type ClusterMessage = { kind: 'revoke'; linkId: string };

/** What the bus reports to the gateway. */
export interface ClusterListener {
  workspace(workspaceId: string, from: string, message: WorkspaceMessage): void;
  cluster(from: string, message: ClusterMessage): void;
  /**
   * This gateway now hears a workspace's messages (the subscription is live, the first time or
   * after the connection to the bus came back): anything published before may have been missed.
   */
  following(workspaceId: string): void;
  /** The connection to the bus dropped: until `resumed`, what the others publish is lost. */
  interrupted(): void;
  /**
   * The connection to the bus came back (its subscriptions are live again): what was announced
   * to the whole cluster meanwhile, a revocation included, may have been missed.
   */
  resumed(): void;
  /** A gateway stopped (shut down, or silent past the liveness timeout). */
  gatewayGone(gatewayId: string): void;
  /**
   * This gateway's registration lapsed (it froze, or could not reach the bus, past the liveness
   * timeout): the others took it for gone and ended its turns. Called once, before it registers
   * again; its turns must end here too.
   */
  fenced(): void;
}

/**
 * How gateways reach each other: Redis pub/sub in a cluster (`RedisBus`), nothing when the
 * gateway runs alone (`SoloBus`). Delivery is at most once and in order per publisher; what
 * can be missed is recovered by `sync` messages, never assumed.
 */
export interface ClusterBus {
  readonly gatewayId: string;
  /** Whether other gateways may exist (false: every path that asks them is skipped). */
  readonly clustered: boolean;
  /** Resolves once the bus is connected and knows which gateways are alive. */
  start(listener: ClusterListener): Promise<void>;
  follow(workspaceId: string): void;
  unfollow(workspaceId: string): void;
  publish(workspaceId: string, message: WorkspaceMessage): void;
  announce(message: ClusterMessage): void;
  /** Whether a gateway has been heard from within the liveness timeout (this one: always). */
  isAlive(gatewayId: string): boolean;
  /** Gateways alive now, this one included. */
  aliveGateways(): number;
  /** Whether this gateway hears the others now (its connection to the bus is up). */
  readonly connected: boolean;
  /**
   * Whether the others count this gateway in: it renewed its registration within the liveness
   * timeout (alone: always). Its agent writes only while this holds.
   */
  readonly member: boolean;
  /** True for the first gateway to claim `key` within `ttlMs` (one of several does a chore). */
  claim(key: string, ttlMs: number): Promise<boolean>;
  close(): Promise<void>;
}
