import { turnsOf } from '../core/agent/roomTurns';
import type { OpResult, Room } from '../core/Room';

/**
 * Puts a playground workspace back to its template, in place, so the links already shared keep
 * working: a streaming turn is stopped, every top-level file and folder deleted, the template's
 * files created again. The thread's history stays (it says what happened).
 */
export function resetToTemplate(room: Room, files: Record<string, string>, by: string): { ok: true } | { ok: false; message: string } {
  turnsOf(room).thread?.stop(`Reset to the template by ${by}.`);
  const tops = new Set([...room.entries.keys()].map((path) => path.split('/')[0]!));
  for (const top of tops) {
    const removed: OpResult = room.apply({ type: 'file.delete', requestId: 0, path: top });
    if (!removed.ok) return { ok: false, message: `Could not delete ${top}: ${removed.message}` };
  }
  const { refused } = room.createFiles(Object.entries(files).map(([path, text]) => ({ path, text })));
  return refused.length === 0 ? { ok: true } : { ok: false, message: `Could not restore ${refused.map((r) => r.path).join(', ')}: ${refused[0]!.message}` };
}
