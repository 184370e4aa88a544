import { FILE_TEXT_KEY } from '@flint/protocol';
import { fromBase64 } from 'lib0/buffer';
import * as Y from 'yjs';

/**
 * The index in a file's `content` text that a client's base64 Yjs relative position points at;
 * null when it points anywhere else ([P19], [P25]). A position is data from the client, not a
 * pointer to trust: Yjs resolves one into whatever type holds its item (the doc's `flint.hunks`
 * map, say) or into the root type it names, and an index there means nothing in the text.
 */
export function resolveContentPosition(doc: Y.Doc, position: string): number | null {
  let relative: Y.RelativePosition;
  try {
    relative = Y.decodeRelativePosition(fromBase64(position));
  } catch {
    // A garbage position is the client's mistake, answered as invalid_range.
    return null;
  }
  // Without an item a position names its type. Only the root type `content` is the text, and
  // resolving another name would create that root type in the gateway's copy (`doc.get`).
  if (relative.item === null && relative.tname !== FILE_TEXT_KEY) return null;
  const text = doc.getText(FILE_TEXT_KEY);
  const absolute = Y.createAbsolutePositionFromRelativePosition(relative, doc);
  return absolute !== null && absolute.type === text ? absolute.index : null;
}
