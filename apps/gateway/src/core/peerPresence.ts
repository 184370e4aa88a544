import { isRelativePositionJson } from '@flint/change-set';
import type { Role } from '@flint/protocol';
import { createHash } from 'node:crypto';
import unhomoglyph from 'unhomoglyph';

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
// Controls, format characters (zero-width joiners, bidi overrides and isolates), code points
// that draw as nothing (soft hyphen, fillers, variation selectors) and blanks that are not
// spaces: a name is drawn in other people's UI, and "Alice" + U+200B must not pass for a second
// person, nor for Alice.
const invisibleInName = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2800\u3164\u115f\u1160\uffa0]/gu;

/** A name as it is shown: NFC, no invisible characters, one space between words. */
export function cleanName(raw: string): string {
  return raw.normalize('NFC').replace(invisibleInName, '').replace(/\s+/gu, ' ').trim();
}

/**
 * What two names are compared by: Unicode TR39's skeleton (through `unhomoglyph`) of the NFKC
 * form, lower-cased, so Cyrillic "А", fullwidth "Ａ" and a decomposed "é" read as what they look
 * like. "Аlice" is taken while Alice is here.
 */
export function nameKey(name: string): string {
  return unhomoglyph(cleanName(name).normalize('NFKC')).toLowerCase();
}

/** "(AI)" however it is spelled: fullwidth, look-alike letters, padded. */
const isAgentMark = (inner: string): boolean => /^a[il1]$/.test(nameKey(inner).replace(/[\s._-]/g, ''));

/** The name without anything that reads as the agent's "(AI)" label: "[AI]", "(A.I.)", a robot. */
function withoutAgentMark(name: string): string {
  const folded = name.normalize('NFKC');
  const stripped = folded
    .replace(/[([{<]([^()[\]{}<>]{1,10})[)\]}>]/g, (group, inner: string) => (isAgentMark(inner) ? ' ' : group))
    .replace(/\u{1F916}/gu, ' ');
  return stripped === folded ? name : cleanName(stripped.replace(/[\s.,:;!-]+$/u, ''));
}

/**
 * The tab id other participants see: derived from the link and the id the tab announced, so a
 * tab of one link can never present the id of another link's tab (follow and presence match on
 * it), while each tab keeps one id in every doc and across reconnects.
 */
function stampId(linkId: string, announced: string): string {
  return createHash('sha256').update(`${linkId}\u0000${announced}`).digest('base64url').slice(0, 22);
}

/**
 * The name and colour a peer asked for, made safe to show: printable, visible, bounded, never
 * the agent's "(AI)" label, its id stamped with the session's link. `taken` says whether another
 * participant already shows as that name (compared by `nameKey`).
 */
export function presentAs(announced: unknown, previous: PeerUser | null, role: Role, taken: (name: string) => boolean, linkId: string): PeerUser {
  const user = (typeof announced === 'object' && announced !== null ? announced : {}) as { id?: unknown; name?: unknown; color?: unknown };
  let name = typeof user.name === 'string' ? withoutAgentMark(cleanName(user.name)) : '';
  name = cleanName(name.slice(0, maxNameLength)) || previous?.name || 'Anonymous';
  const base = name;
  for (let n = 2; taken(name); n++) name = `${base.slice(0, maxNameLength - 5)} (${n})`;
  const id = typeof user.id === 'string' && /^[\w-]{1,64}$/.test(user.id) ? stampId(linkId, user.id) : (previous?.id ?? '');
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
