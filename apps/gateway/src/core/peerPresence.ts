import { isRelativePositionJson } from '@flint/change-set';
import type { Role } from '@flint/protocol';

/** Who a session is, as every other participant sees it: set by the gateway, not by the peer. */
export interface PeerUser {
  /** The tab's own id (the same in every doc), so its cursor and presence entry can be matched. */
  id: string;
  name: string;
  color: string;
  role: Role;
}

export const maxStateJsonLength = 4096;
const maxNameLength = 40;
const maxActiveFileLength = 1024;
const fallbackColor = '#9aa3b2';
// Controls, bidi overrides and isolates: a name is drawn in other people's UI.
const unsafeInName = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The name and colour a peer asked for, made safe to show: printable, bounded, never the
 * agent's "(AI)" label. `taken` says whether another participant already shows as that name.
 */
export function presentAs(announced: unknown, previous: PeerUser | null, role: Role, taken: (name: string) => boolean): PeerUser {
  const user = (typeof announced === 'object' && announced !== null ? announced : {}) as { id?: unknown; name?: unknown; color?: unknown };
  let name = typeof user.name === 'string' ? user.name.replace(unsafeInName, '').trim() : '';
  name = name.replace(/\s*\(AI\)$/i, '').slice(0, maxNameLength).trim() || previous?.name || 'Anonymous';
  const base = name;
  for (let n = 2; taken(name); n++) name = `${base.slice(0, maxNameLength - 5)} (${n})`;
  const id = typeof user.id === 'string' && /^[\w-]{1,64}$/.test(user.id) ? user.id : (previous?.id ?? '');
  const color = typeof user.color === 'string' && /^#[0-9a-f]{6}$/i.test(user.color) ? user.color : (previous?.color ?? fallbackColor);
  return { id, name, color, role };
}

/**
 * A peer's awareness state as the others will get it: a JSON object whose `user` is the one the
 * gateway gives the session, and whose fields Flint's clients read are well-formed — the
 * selection's Yjs relative positions (Yjs resolves them unchecked) and the active file. Other
 * fields pass as they are, within the size bound. Returns null for anything else: the session
 * sent a malformed frame.
 */
export function restampState(stateJson: string, stamp: (announced: unknown) => PeerUser): string | null {
  if (stateJson.length > maxStateJsonLength) return null;
  let state: unknown;
  try {
    state = JSON.parse(stateJson);
  } catch {
    return null; // converted: the caller refuses the frame
  }
  if (typeof state !== 'object' || state === null || Array.isArray(state)) return null;
  const out = { ...state } as Record<string, unknown>;
  const { user, selection, activeFile } = out;
  if (user !== undefined) out.user = stamp(user);
  if (selection !== undefined && selection !== null && !isSelection(selection)) return null;
  if (activeFile !== undefined && activeFile !== null && (typeof activeFile !== 'string' || activeFile.length > maxActiveFileLength)) return null;
  return JSON.stringify(out);
}

function isSelection(value: unknown): boolean {
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  const { anchor, head } = value as { anchor?: unknown; head?: unknown };
  return isRelativePositionJson(anchor) && isRelativePositionJson(head);
}
