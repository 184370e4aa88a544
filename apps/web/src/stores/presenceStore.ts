import type { DocHandle, FlintClient } from '@flint/client';
import { PEER_COLORS } from '@flint/protocol';
import { removeAwarenessStates } from 'y-protocols/awareness';
import { create } from 'zustand';
import { selectActivePath, useWorkspace } from './workspaceStore';

/**
 * What a tab publishes as `user` in every awareness it joins. `id` is per tab and the same in
 * every document, so a person's cursor in a file can be matched with their entry in the
 * workspace presence (each Y.Doc has its own awareness client id).
 */
export interface PresenceUser {
  id: string;
  name: string;
  color: string;
}

export interface Peer {
  /** The peer's client id in the index awareness: stable for the life of their tab. */
  clientId: number;
  user: PresenceUser;
  activeFile: string | null;
}

interface PresenceState {
  self: PresenceUser;
  peers: readonly Peer[];
  /** The index client id of the peer this tab follows, if any. */
  following: number | null;
}

const nameKey = 'flint.displayName';
const colorKey = 'flint.color';
const palette = PEER_COLORS;
const animals = ['Otter', 'Lynx', 'Heron', 'Marten', 'Ibex', 'Kestrel', 'Puffin', 'Tapir', 'Gecko', 'Wombat', 'Narwhal', 'Okapi'];

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}

/** Not crypto.randomUUID: that needs a secure context, and Flint may be served on plain http. */
function randomId(): string {
  return [...crypto.getRandomValues(new Uint8Array(12))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function storedOr(key: string, fallback: () => string): string {
  try {
    const stored = localStorage.getItem(key);
    if (stored) return stored;
    const value = fallback();
    localStorage.setItem(key, value);
    return value;
  } catch {
    return fallback(); // storage disabled (private mode): a fresh name per tab is fine
  }
}

export const usePresence = create<PresenceState>(() => ({
  self: {
    id: randomId(),
    name: storedOr(nameKey, () => `${pick(animals)} ${Math.floor(10 + Math.random() * 90)}`),
    color: storedOr(colorKey, () => pick(palette)),
  },
  peers: [],
  following: null,
}));

export function setDisplayName(name: string): void {
  const trimmed = name.trim().slice(0, 40);
  if (!trimmed || trimmed === usePresence.getState().self.name) return;
  try {
    localStorage.setItem(nameKey, trimmed);
  } catch {
    // Not persisted; the name still applies to this tab.
  }
  usePresence.setState((state) => ({ self: { ...state.self, name: trimmed } }));
}

export function follow(clientId: number | null): void {
  usePresence.setState({ following: clientId });
}

function isUser(value: unknown): value is PresenceUser {
  if (typeof value !== 'object' || value === null) return false;
  const user = value as Record<string, unknown>;
  return typeof user.name === 'string' && typeof user.color === 'string';
}

/**
 * Drops everyone else's awareness from a doc. Used when the connection goes: the gateway's
 * removals cannot reach us then, and stale cursors would linger until awareness times them
 * out (30 s). A reconnect brings the live ones back. The origin is not 'local', so the client
 * does not try to send the removal.
 */
export function forgetRemotePresence(handle: DocHandle): void {
  const { awareness } = handle;
  const remote = [...awareness.getStates().keys()].filter((id) => id !== awareness.clientID);
  if (remote.length > 0) removeAwarenessStates(awareness, remote, 'connection lost');
}

/**
 * Announces our state again after a reconnect. Peers that dropped us (we went away) ignore a
 * state with the clock they already saw, so it is re-set to bump the clock. Deferred: the
 * client must first send sync step 1 for the doc, which it does right after reporting 'open'.
 */
export function reannouncePresence(handle: DocHandle): void {
  queueMicrotask(() => {
    const state = handle.awareness.getLocalState();
    if (state !== null) handle.awareness.setLocalState(state);
  });
}

/** Publishes this tab in the workspace presence and mirrors everyone else's into the store. */
export function bindPresence(client: FlintClient): void {
  const awareness = client.index.awareness;
  const publish = () => {
    awareness.setLocalState({
      user: usePresence.getState().self,
      activeFile: selectActivePath(useWorkspace.getState()),
    });
  };
  const refresh = () => {
    const peers: Peer[] = [];
    for (const [clientId, state] of awareness.getStates()) {
      if (clientId === awareness.clientID || !isUser(state.user)) continue;
      const user: PresenceUser = {
        id: typeof state.user.id === 'string' ? state.user.id : `index-${clientId}`,
        name: state.user.name.slice(0, 40),
        // Only a plain colour reaches a style attribute: a peer controls this string.
        color: /^#[0-9a-f]{6}$/i.test(state.user.color) ? state.user.color : '#9aa3b2',
      };
      peers.push({ clientId, user, activeFile: typeof state.activeFile === 'string' ? state.activeFile : null });
    }
    peers.sort((a, b) => a.user.name.localeCompare(b.user.name) || a.clientId - b.clientId);
    // While reconnecting everyone is gone for a moment; keep following whoever comes back.
    const connected = client.status.kind === 'open';
    usePresence.setState((state) => ({
      peers,
      following: !connected || peers.some((p) => p.clientId === state.following) ? state.following : null,
    }));
  };
  awareness.on('change', refresh);
  let wasOpen = false;
  client.onStatus((status) => {
    if (status.kind !== 'open') forgetRemotePresence(client.index);
    else if (wasOpen) reannouncePresence(client.index);
    wasOpen ||= status.kind === 'open';
  });
  publish();
  refresh();
  usePresence.subscribe((state, previous) => {
    if (state.self !== previous.self) publish();
  });
  useWorkspace.subscribe((state, previous) => {
    if (selectActivePath(state) !== selectActivePath(previous)) publish();
  });
}
