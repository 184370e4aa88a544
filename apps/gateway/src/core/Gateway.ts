import { CloseCode, revokedReason, type Role, type ThreadAuthor, type ThreadRequest } from '@flint/protocol';
import type { LinkRecord, Store } from './ports/Store';
import type { Clock } from './ports/Clock';
import type { Random } from './ports/Random';
import { Extensions, type Extension, type ExtensionFactory, type ExtensionSession, type MessageNamespace } from './Extension';
import { defaultConfig, type GatewayConfig } from './GatewayConfig';
import type { Log } from './ports/Log';
import type { GatewayContext } from './GatewayContext';
import { LinkService, type AuthResult, type CreatedLink, type LinkRequestResult } from './LinkService';
import { Metrics } from './Metrics';
import { cleanName } from './peerPresence';
import type { Connection, PeerSocket } from './PeerSocket';
import type { Room } from './Room';
import { RoomRegistry } from './RoomRegistry';
import { SoloBus } from './cluster/SoloBus';
import type { ClusterBus } from './ports/ClusterBus';
import { ClusterNode } from './cluster/ClusterNode';
import { RevocationWatch } from './cluster/RevocationWatch';
import { Session } from './Session';
import { terminalsOff, type TerminalHost } from './TerminalHost';
import type * as Y from 'yjs';

export interface GatewayOptions {
  store: Store;
  clock: Clock;
  /** Where ids and tokens come from (`systemRandom`; a seeded one in tests). */
  random: Random;
  config?: Partial<GatewayConfig>;
  log?: Log;
  /** The features (search, completion, the agent, …), each made once the kernel exists; none by default. */
  extensions?: readonly ExtensionFactory[];
  /** The other gateways of a cluster (decision 0024); alone by default. */
  bus?: ClusterBus;
  /** Shared terminals (apps/gateway/src/terminal); off by default. */
  terminals?: TerminalHost;
}

export interface CreatedWorkspace {
  workspaceId: string;
  owner: CreatedLink;
}

/**
 * The transport-agnostic gateway: workspaces, links, rooms and sessions. The transport hands
 * it sockets (`connect`); REST handlers call the workspace and link methods.
 */
const storageQuotaKey = (workspaceId: string) => `storage-quota:${workspaceId}`;

export class Gateway {
  readonly metrics = new Metrics();
  readonly links: LinkService;
  /** This gateway as one of a cluster: start its bus with it (`bus.start(gateway.cluster)`). */
  readonly cluster: ClusterNode;
  private readonly rooms: RoomRegistry;
  private readonly sessionsByLink = new Map<string, Set<Session>>();
  /** Open sessions per client address (the per-address cap). */
  private readonly sessionsByAddress = new Map<string, number>();
  /** Bytes of updates waiting in all sessions for what they build on. */
  private waitingBytes = 0;
  private readonly store: Store;
  private readonly extensions: Extensions;
  private readonly random: Random;
  private readonly ctx: GatewayContext;
  /** Revocations, including those whose announcement a cluster lost. */
  private readonly revocations: RevocationWatch;

  constructor(options: GatewayOptions) {
    const config = { ...defaultConfig, ...options.config };
    this.store = options.store;
    this.random = options.random;
    this.links = new LinkService(options.store, options.clock, options.random);
    const log: Log = options.log ?? (() => {});
    this.revocations = new RevocationWatch({
      store: options.store,
      clock: options.clock,
      intervalMs: config.linkCheckIntervalMs,
      openLinks: () => this.sessionsByLink.keys(),
      closeLink: (linkId) => this.closeSessionsOf(linkId),
      log,
    });
    // Alone, a revocation is never announced, so never lost: nothing to watch.
    if (options.bus?.clustered) this.revocations.start();
    this.links.checkValidity((linkId) => this.revocations.stillValid(linkId));
    this.cluster = new ClusterNode({
      bus: options.bus ?? new SoloBus(options.random.id('g')),
      loadedRoom: (workspaceId) => this.rooms.loaded(workspaceId),
      loadedRooms: () => this.rooms.all(),
      revocations: this.revocations,
      threadRequest: (room, request, linkId, author) => this.requestFromCluster(room, request, linkId, author),
      metrics: this.metrics,
      log,
      now: () => options.clock.now(),
      random: options.random,
    });
    const host = { clock: options.clock, random: options.random, metrics: this.metrics, log, config, mayWrite: () => this.cluster.member };
    this.extensions = new Extensions((options.extensions ?? []).map((make) => make(host)), log);
    this.rooms = new RoomRegistry(options.store, options.clock, options.random, config, this.metrics, log, this.cluster, this.extensions);
    this.ctx = {
      gatewayId: this.cluster.gatewayId,
      clock: options.clock,
      random: options.random,
      config,
      metrics: this.metrics,
      links: this.links,
      rooms: this.rooms,
      log,
      extensions: this.extensions,
      terminals: options.terminals ?? terminalsOff,
      sessionRefused: (linkId, address) => {
        const caps = config.sessions;
        if ((this.sessionsByLink.get(linkId)?.size ?? 0) >= caps.perLink) return `${caps.perLink} tabs are open with this link already`;
        if (address && (this.sessionsByAddress.get(address) ?? 0) >= caps.perAddress) return `${caps.perAddress} tabs are open from this address already`;
        return null;
      },
      waiting: {
        take: (bytes) => {
          if (this.waitingBytes + bytes > config.sessions.waitingBytes) return false;
          this.waitingBytes += bytes;
          return true;
        },
        release: (bytes) => void (this.waitingBytes -= bytes),
      },
      sessionOpened: (session) => {
        let sessions = this.sessionsByLink.get(session.linkId);
        if (!sessions) this.sessionsByLink.set(session.linkId, (sessions = new Set()));
        sessions.add(session);
        if (session.address) this.sessionsByAddress.set(session.address, (this.sessionsByAddress.get(session.address) ?? 0) + 1);
      },
      sessionClosed: (session: Session, room: Room) => {
        const sessions = this.sessionsByLink.get(session.linkId);
        sessions?.delete(session);
        if (sessions?.size === 0) this.sessionsByLink.delete(session.linkId);
        const fromAddress = (this.sessionsByAddress.get(session.address) ?? 1) - 1;
        if (fromAddress > 0) this.sessionsByAddress.set(session.address, fromAddress);
        else this.sessionsByAddress.delete(session.address);
        this.ctx.terminals.left(session, room.workspace.id);
        this.rooms.released(room);
      },
    };
    this.describeMetrics();
  }

  private describeMetrics(): void {
    const m = this.metrics;
    m.describe('flint_sessions', 'Open WebSocket sessions.');
    m.gauge('flint_sessions', () => this.sessionCount);
    m.describe('flint_rooms_loaded', 'Workspaces loaded in memory.');
    m.gauge('flint_rooms_loaded', () => this.rooms.size);
    m.describe('flint_docs_loaded', 'Documents loaded in memory, indexes included.');
    m.gauge('flint_docs_loaded', () => this.rooms.loadedDocs);
    m.describe('flint_session_closes_total', 'Sessions the gateway closed, by close code.');
    m.describe('flint_doc_updates_total', 'Document updates persisted and broadcast.');
    m.describe('flint_updates_held_back_total', 'Times a session\'s socket was too full for a doc update: held back until it drains, then sent as one catch-up update.');
    m.describe('flint_store_failures_total', 'Document updates the store refused: each dropped its room from memory (its tabs resend on reconnect).');
  }

  get config(): GatewayConfig {
    return this.ctx.config;
  }

  get sessionCount(): number {
    let count = 0;
    for (const sessions of this.sessionsByLink.values()) count += sessions.size;
    return count;
  }

  isRoomLoaded(workspaceId: string): boolean {
    return this.rooms.isLoaded(workspaceId);
  }

  /**
   * A document as the gateway holds it, for in-process readers (an operator's tool, tests):
   * loads the room if needed; null when there is no such workspace or doc.
   */
  document(workspaceId: string, docId: string): Y.Doc | null {
    return this.rooms.get(workspaceId)?.doc(docId)?.doc ?? null;
  }

  /**
   * Keeps a workspace's room loaded (and its docs reachable) until released, for in-process
   * peers that are not sessions: a folder project syncing the room with a disk.
   */
  holdRoom(workspaceId: string): { room: Room; release(): void } | null {
    return this.rooms.hold(workspaceId);
  }

  /** What a link token may do in a workspace (REST endpoints that act for a link). */
  authenticate(workspaceId: string, token: string): AuthResult {
    return this.links.authenticate(workspaceId, token);
  }

  /** Accepts a new socket; the transport forwards its frames and its close to the result. */
  connect(socket: PeerSocket): Connection {
    return new Session(socket, this.ctx);
  }

  /** Creates a workspace seeded with files, and its owner link. Seeding happens here, once. */
  createWorkspace(requestedName: string, files: Record<string, string> = {}): CreatedWorkspace {
    // Shown in every tab's title and top bar: no control, bidi-override or invisible characters.
    const name = cleanName(requestedName).slice(0, 100) || 'Untitled workspace';
    const workspaceId = this.random.id('w');
    this.store.createWorkspace({ id: workspaceId, name, createdAt: this.ctx.clock.now() });
    const room = this.rooms.get(workspaceId);
    if (!room) throw new Error(`workspace ${workspaceId} vanished right after creation`);
    for (const [path, content] of Object.entries(files)) {
      const result = room.createFile(path, content);
      if (!result.ok) throw new Error(`cannot seed "${path}": ${result.message}`);
    }
    this.rooms.released(room);
    const owner = this.links.create(workspaceId, 'owner', 'Owner', null);
    return { workspaceId, owner };
  }

  /** What uploads may leave a workspace's files holding: the quota its owner set, else the gateway's default. */
  storageQuota(workspaceId: string): number {
    const set = Number(this.store.getMeta(storageQuotaKey(workspaceId)));
    return Number.isSafeInteger(set) && set > 0 ? set : this.ctx.config.storageQuotaBytes;
  }

  /** The owner's quota for a workspace (checked by the caller: an owner link, a positive whole number). */
  setStorageQuota(workspaceId: string, bytes: number): void {
    this.store.setMeta(storageQuotaKey(workspaceId), String(bytes));
  }

  /** The extension answering `namespace` (a host's REST route reaching a feature), or null. */
  extension(namespace: MessageNamespace): Extension | null {
    return this.extensions.byName(namespace);
  }

  /** Deletes a workspace and all its data (an expired playground workspace): its tabs close with 4404. */
  deleteWorkspace(workspaceId: string): void {
    this.rooms.discard(workspaceId);
    this.store.deleteWorkspace(workspaceId);
  }

  /**
   * Empties documents of a workspace for a replay's seek back (issue 37; Yjs cannot take an
   * update back): its room leaves memory, its tabs close with 4205 (they reload, and sync from
   * nothing), and the documents `docIds` are deleted from the store. Holds of the room end; the
   * next `holdRoom` loads it again, empty, to be written afresh.
   */
  clearDocs(workspaceId: string, docIds: Iterable<string>): void {
    this.rooms.discard(workspaceId, CloseCode.Rewound, 'the replay went back in time');
    for (const docId of docIds) this.store.deleteDoc(`${workspaceId}/${docId}`);
  }

  /** Tabs open on a workspace through this gateway now. */
  sessionsIn(workspaceId: string): number {
    return this.rooms.loaded(workspaceId)?.sessions.size ?? 0;
  }

  workspaceExists(workspaceId: string): boolean {
    return this.store.getWorkspace(workspaceId) !== null;
  }

  share(
    workspaceId: string,
    token: string,
    request: { role: Role; label: string; expiresInMs: number | null },
  ): LinkRequestResult<CreatedLink> {
    return this.links.share(workspaceId, token, request);
  }

  listLinks(workspaceId: string, token: string): LinkRequestResult<LinkRecord[]> {
    return this.links.list(workspaceId, token);
  }

  /**
   * Revokes a link and disconnects its sessions at once, telling them who did it: `byName` is
   * the revoker's display name when the request gave one (as self-declared as a cursor's name).
   */
  revokeLink(workspaceId: string, token: string, linkId: string, byName: string | null = null): LinkRequestResult<LinkRecord> {
    // Who revokes, asked first: an owner may revoke the very link it holds.
    const by = this.links.authenticate(workspaceId, token);
    const result = this.links.revoke(workspaceId, token, linkId);
    if (result.ok) {
      this.closeSessionsOf(linkId, by.ok ? revokedReason(revokerName(by.link, byName)) : undefined);
      this.cluster.announce({ kind: 'revoke', linkId });
    }
    return result;
  }

  /** `reason` names who revoked the link where this gateway knows it ([P15]). */
  private closeSessionsOf(linkId: string, reason = 'link revoked'): void {
    for (const session of [...(this.sessionsByLink.get(linkId) ?? [])]) session.close(CloseCode.LinkRevoked, reason);
  }

  /**
   * A request (a thread message, Stop) a session on another gateway sent for work running here:
   * the extension of its namespace handles it as if sent here, by the same link (its rate and
   * budgets), with no session to answer.
   */
  private requestFromCluster(room: Room, request: ThreadRequest, linkId: string, author: ThreadAuthor): void {
    // The gateway that sent it may have missed the link's revocation (a lost announcement).
    const link = this.store.getLink(linkId);
    if (!link || link.revokedAt !== null) {
      this.ctx.log('info', 'a thread request from another gateway was refused: its link is revoked', { linkId });
      return;
    }
    const extension = this.extensions.for(request);
    if (!extension?.onMessage) return;
    const from: ExtensionSession = {
      sessionId: `cluster:${linkId}`,
      linkId,
      role: link.role,
      workspaceId: room.workspace.id,
      user: author,
      send: () => {},
      sendControl: (answer) => {
        if (answer.type === 'result' && !answer.ok) this.ctx.log('info', 'a thread request from another gateway was refused', { code: answer.code });
      },
      close: () => {},
    };
    void Promise.resolve(extension.onMessage(request, from, room)).catch((error: unknown) => {
      this.ctx.log('error', `a request from another gateway failed: ${request.type}`, { linkId, error: String(error) });
    });
  }

  /** Closes every session (clients will reconnect) and unloads rooms, compacting their docs. */
  shutdown(): void {
    this.revocations.stop();
    void this.ctx.terminals.close();
    for (const sessions of [...this.sessionsByLink.values()]) {
      for (const session of [...sessions]) session.close(CloseCode.GoingAway, 'gateway shutting down');
    }
    this.rooms.closeAll();
    this.extensions.notify('onClose');
  }
}

/**
 * How a revoked tab names who revoked its link: the person's name when given, else the revoking
 * link's role, with its label when that says more.
 */
function revokerName(link: LinkRecord, byName: string | null): string {
  const name = byName === null ? '' : cleanName(byName).slice(0, 40);
  if (name !== '') return `${name} (the ${link.role})`;
  const label = link.label.trim();
  const plain = [link.role, `${link.role} link`].includes(label.toLowerCase());
  return plain || label === '' ? `the ${link.role}` : `the ${link.role} (“${label}”)`;
}
