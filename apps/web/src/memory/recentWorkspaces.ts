import type { Role } from '@flint/protocol';

/**
 * The workspaces this browser opened, newest first, kept in this browser's localStorage only:
 * with each, its link token, so `/w/<id>` without one gets the owner back in. The token is
 * read back only to open that workspace; it never leaves the browser otherwise.
 */
export interface RecentWorkspace {
  id: string;
  name: string;
  role: Role;
  lastOpenedAt: number;
  token: string;
}

const storageKey = 'flint.workspaces';
const maxEntries = 50;
const rank: Record<Role, number> = { viewer: 0, editor: 1, owner: 2 };

function read(storage: Storage): RecentWorkspace[] {
  try {
    const parsed: unknown = JSON.parse(storage.getItem(storageKey) ?? '[]');
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (e): e is RecentWorkspace =>
        typeof e === 'object' && e !== null && typeof e.id === 'string' && typeof e.token === 'string' && typeof e.name === 'string' && e.role in rank && typeof e.lastOpenedAt === 'number',
    );
  } catch {
    // Unreadable (hand-edited, another version): start the list again rather than fail the page.
    return [];
  }
}

function write(storage: Storage, entries: RecentWorkspace[]): void {
  try {
    storage.setItem(storageKey, JSON.stringify(entries.slice(0, maxEntries)));
  } catch (error) {
    // Storage full or blocked (private mode): the list is a convenience, the workspace still opens.
    console.warn('Flint: could not remember this workspace', error);
  }
}

export function recentWorkspaces(storage: Storage = localStorage): RecentWorkspace[] {
  return read(storage).sort((a, b) => b.lastOpenedAt - a.lastOpenedAt);
}

/**
 * Notes a workspace as opened now. A stronger link already kept for it stays (opening an
 * editor link must not cost this browser the owner's way back in).
 */
export function rememberWorkspace(entry: Omit<RecentWorkspace, 'lastOpenedAt'>, now = Date.now(), storage: Storage = localStorage): void {
  const entries = read(storage);
  const kept = entries.find((e) => e.id === entry.id);
  const stronger = kept && kept.token !== entry.token && rank[kept.role] > rank[entry.role];
  const next: RecentWorkspace = stronger ? { ...kept, name: entry.name, lastOpenedAt: now } : { ...entry, lastOpenedAt: now };
  write(storage, [next, ...entries.filter((e) => e.id !== entry.id)]);
}

/** Drops a workspace's entry when its token stopped working (revoked, expired, gone). */
export function forgetWorkspace(id: string, token: string, storage: Storage = localStorage): void {
  const entries = read(storage);
  if (entries.some((e) => e.id === id && e.token === token)) write(storage, entries.filter((e) => e.id !== id));
}

/** The token this browser keeps for a workspace, if any. */
export function storedToken(id: string, storage: Storage = localStorage): string | null {
  return read(storage).find((e) => e.id === id)?.token ?? null;
}
