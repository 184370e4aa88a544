import * as Y from 'yjs';

/**
 * Reading a file's Y.Doc by who wrote what, for the crash and cluster tests: the agent writes
 * with its own Yjs client ids, which its hunk records (`flint.hunks`) name.
 */
/** protocol's FILE_TEXT_KEY and change-set's HUNKS_KEY (test-kit depends on neither). */
const FILE_TEXT = 'content';
const HUNKS = 'flint.hunks';

/** The Yjs client ids the agent wrote with: every hunk record names its own. */
export function agentClients(doc: Y.Doc): Set<number> {
  return new Set([...doc.getMap<{ agentClient: number }>(HUNKS).values()].map((record) => record.agentClient));
}

/** The agent's characters in a doc, by Yjs id (`client:clock`). */
export function agentChars(doc: Y.Doc): Set<string> {
  const agents = agentClients(doc);
  const seen = new Set<string>();
  for (let item = doc.getText(FILE_TEXT)._start; item !== null; item = item.right) {
    if (item.deleted || !agents.has(item.id.client)) continue;
    for (let i = 0; i < item.length; i++) seen.add(`${item.id.client}:${item.id.clock + i}`);
  }
  return seen;
}

/** The text without the agent's characters: its inserts may land inside what a person typed. */
export function peopleText(doc: Y.Doc): string {
  const agents = agentClients(doc);
  let text = '';
  for (let item = doc.getText(FILE_TEXT)._start; item !== null; item = item.right) {
    if (!item.deleted && !agents.has(item.id.client) && item.content instanceof Y.ContentString) text += item.content.str;
  }
  return text;
}

/** A character (`client:clock`) someone deleted meanwhile is not lost: it is in the doc's delete set. */
export function isDeleted(doc: Y.Doc, id: string): boolean {
  const [client, clock] = id.split(':').map(Number) as [number, number];
  return Y.isDeleted(Y.createDeleteSetFromStructStore(doc.store), Y.createID(client, clock));
}
