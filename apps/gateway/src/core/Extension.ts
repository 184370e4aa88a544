import type { ClientMessage, Role, ServerMessage } from '@flint/protocol';
import type { GatewayConfig } from './GatewayConfig';
import type { Metrics } from './Metrics';
import type { PeerUser } from './peerPresence';
import type { Clock } from './ports/Clock';
import type { Log } from './ports/Log';
import type { Random } from './ports/Random';
import type { Room } from './Room';
import type { Subscriber } from './Subscriber';

/** The first word of a control message's type: `search` for `search.run`. */
type NamespaceOf<T extends string> = T extends `${infer N}.${string}` ? N : never;
/** Every namespace of the protocol's client messages (`agent`, `thread`, `complete`, `search`, …). */
export type MessageNamespace = NamespaceOf<ClientMessage['type']>;
/** The client messages of namespace `N`. */
export type MessageOf<N extends MessageNamespace> = Extract<ClientMessage, { type: `${N}.${string}` }>;

/** A session as an extension sees it: who it is, what its link may do, where its frames go. */
export interface ExtensionSession extends Subscriber {
  readonly role: Role;
  /** The workspace it joined. */
  readonly workspaceId: string;
  /** Who it shows as (its name and colour, stamped by the kernel), once it announced itself. */
  readonly user: Pick<PeerUser, 'name' | 'color'> | null;
  /** Sends a reply after whatever updates the session held back (a reply never overtakes them). */
  sendControl(message: ServerMessage): void;
  /** Ends the session with a close code (SPEC §Close codes): what a role may not send closes it. */
  close(code: number, reason: string): void;
}

/**
 * A feature of the gateway (search, completion, …): it answers the control messages of its own
 * namespace and hears of sessions and rooms through hooks. The kernel (Session, Room, Gateway)
 * knows documents, awareness, sessions and permissions, and calls extensions through this
 * interface only; it never imports one. Every hook is optional.
 */
export interface Extension<N extends MessageNamespace = MessageNamespace> {
  /** The namespace it answers: one extension per namespace. */
  readonly namespace: N;
  /**
   * A control message of its namespace from a session in `room`. The extension checks the role
   * itself (a viewer may search but not replace; a viewer asking for completions is closed). A
   * rejection is the kernel's to report: a store that failed closes the session for a retry,
   * anything else is logged as a bug.
   */
  onMessage?(message: MessageOf<N>, session: ExtensionSession, room: Room): void | Promise<void>;
  /** A session said hello and joined `room`. */
  onSessionOpen?(session: ExtensionSession, room: Room): void;
  /** A session of `room` is gone: what it started should stop spending. */
  onSessionClose?(session: ExtensionSession, room: Room): void;
  /** A workspace's room was loaded from the store. */
  onRoomLoad?(room: Room): void;
  /** A room left memory: idle, its store failed, or the gateway shut down. */
  onRoomUnload?(room: Room): void;
  /** The gateway is shutting down. */
  onClose?(): void;
}

/** What an extension is made with: the kernel's time, randomness, metrics, log and settings. */
export interface ExtensionHost {
  readonly clock: Clock;
  readonly random: Random;
  readonly metrics: Metrics;
  readonly log: Log;
  readonly config: GatewayConfig;
  /** Whether this gateway may still write into documents: in a cluster, while the others count it in. */
  mayWrite(): boolean;
}

/** Makes an extension once the gateway's kernel exists (one line per feature in the composition root). */
export type ExtensionFactory = (host: ExtensionHost) => Extension;

/** The hooks the kernel calls on every extension (all but `onMessage`, which goes to one). */
type Hook = Exclude<keyof Extension, 'namespace' | 'onMessage'>;

/** The extensions of one gateway, by namespace: the kernel's side of every hook. */
export class Extensions {
  private readonly byNamespace = new Map<string, Extension>();

  constructor(
    private readonly all: readonly Extension[],
    private readonly log: Log,
  ) {
    for (const extension of all) {
      if (this.byNamespace.has(extension.namespace)) throw new Error(`two extensions answer "${extension.namespace}.*"`);
      this.byNamespace.set(extension.namespace, extension);
    }
  }

  /** The extension answering `namespace`, or null when this gateway has none. */
  byName(namespace: string): Extension | null {
    return this.byNamespace.get(namespace) ?? null;
  }

  /** The extension answering `message`'s namespace, or null when this gateway has none. */
  for(message: ClientMessage): Extension | null {
    const dot = message.type.indexOf('.');
    return dot < 0 ? null : (this.byNamespace.get(message.type.slice(0, dot)) ?? null);
  }

  /**
   * Calls `hook` on every extension that has it. Hooks run inside the kernel's own paths (a
   * session's close, a room's unload timer), where a throw would break the kernel or end the
   * process: one extension's failure is logged and the others still hear.
   */
  notify<H extends Hook>(hook: H, ...args: Parameters<NonNullable<Extension[H]>>): void {
    for (const extension of this.all) {
      const fn = extension[hook] as ((...a: typeof args) => void) | undefined;
      if (!fn) continue;
      try {
        fn.apply(extension, args);
      } catch (error) {
        this.log('error', 'an extension failed in a hook', { namespace: extension.namespace, hook, error: String(error) });
      }
    }
  }
}
