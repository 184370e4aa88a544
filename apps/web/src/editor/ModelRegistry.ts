import type { DocHandle, FlintClient } from '@flint/client';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { MonacoBinding } from 'y-monaco';
import * as Y from 'yjs';
import type { PresenceUser } from '../stores/presenceStore';
import { useSettings } from '../stores/settingsStore';
import { FileUndo } from './FileUndo';
import { monaco } from './monacoSetup';
import { nearestCode } from './nearestCode';

const noFiles: ReadonlySet<string> = new Set();

/** Files the TypeScript worker must see even when no tab shows them, so imports resolve. */
const codeFile = /\.(?:[cm]?[jt]sx?)$/;

export function isCodeFile(path: string): boolean {
  return codeFile.test(path);
}

export function uriOf(path: string): monaco.Uri {
  return monaco.Uri.from({ scheme: 'file', path: '/' + path });
}

/** The workspace path of a model uri, or null for models that are not workspace files. */
export function pathOfUri(uri: monaco.Uri): string | null {
  return uri.scheme === 'file' && uri.path.length > 1 ? uri.path.slice(1) : null;
}

interface BoundFile {
  path: string;
  handle: DocHandle;
  model: monaco.editor.ITextModel;
  binding: MonacoBinding;
  /** Outlives the model: a rename rebinds the file, and its history stays. */
  undo: FileUndo;
}

export interface ModelRegistryHooks {
  onOpen(handle: DocHandle): void;
  onClose(handle: DocHandle): void;
  /** Called just before the model of a file is replaced (a rename changes its uri). */
  onModelWillChange(fileId: string): void;
}

/**
 * One Monaco model per open file, bound to the file's Y.Doc by y-monaco. A model's uri is its
 * workspace path ("file:///src/app.ts"), which is what lets the TypeScript worker resolve
 * "./app" from another file; a rename therefore replaces the model while the doc stays open.
 */
export class ModelRegistry {
  private readonly files = new Map<string, BoundFile>();
  private user: PresenceUser;
  /**
   * The editors that show these models (one per editor group), shared by every binding:
   * y-monaco keeps each one's selection across remote edits and draws others' cursors in it.
   */
  private readonly editors = new Set<monaco.editor.IStandaloneCodeEditor>();

  constructor(
    private readonly client: FlintClient,
    user: PresenceUser,
    private readonly hooks: ModelRegistryHooks,
  ) {
    this.user = user;
  }

  /** An editor group's editor joins (until the returned function is called). */
  addEditor(editor: monaco.editor.IStandaloneCodeEditor): () => void {
    this.editors.add(editor);
    return () => this.editors.delete(editor);
  }

  /**
   * This tab's caret in a file, as y-monaco announces it for the editor it was built with; a
   * second group's editor on the file announces through this.
   */
  announceSelection(fileId: string, selection: monaco.Selection): void {
    const file = this.files.get(fileId);
    if (!file) return;
    const ytext = file.handle.doc.getText(FILE_TEXT_KEY);
    let anchor = file.model.getOffsetAt(selection.getStartPosition());
    let head = file.model.getOffsetAt(selection.getEndPosition());
    if (selection.getDirection() === monaco.SelectionDirection.RTL) [anchor, head] = [head, anchor];
    file.handle.awareness.setLocalStateField('selection', {
      anchor: Y.createRelativePositionFromTypeIndex(ytext, anchor),
      head: Y.createRelativePositionFromTypeIndex(ytext, head),
    });
  }

  /**
   * Brings the open files in line with the workspace: every code file, plus every open tab, but
   * never a binary file (it has no document to open).
   */
  reconcile(pathById: ReadonlyMap<string, string>, tabs: readonly string[], binaryFileIds: ReadonlySet<string> = noFiles): void {
    const wanted = new Map<string, string>();
    const code: Array<[string, string]> = [];
    for (const [fileId, path] of pathById) {
      if (binaryFileIds.has(fileId)) continue;
      if (tabs.includes(fileId)) wanted.set(fileId, path);
      else if (isCodeFile(path)) code.push([fileId, path]);
    }
    for (const [fileId, path] of nearestCode(code, tabs.map((id) => pathById.get(id)).filter((p): p is string => p !== undefined))) wanted.set(fileId, path);
    for (const fileId of [...this.files.keys()]) {
      if (!wanted.has(fileId)) this.close(fileId);
    }
    // Unbind every moved file before binding any: two files may swap paths in one change.
    const moved: Array<[string, BoundFile, string]> = [];
    for (const [fileId, file] of this.files) {
      const path = wanted.get(fileId);
      if (path === undefined || path === file.path) continue;
      this.hooks.onModelWillChange(fileId);
      file.model.dispose(); // also destroys the binding (y-monaco listens for it)
      file.undo.untrack(file.binding);
      moved.push([fileId, file, path]);
    }
    for (const [fileId, file, path] of moved) this.files.set(fileId, this.bind(file.handle, path, file.undo));
    for (const [fileId, path] of wanted) {
      if (!this.files.has(fileId)) this.open(fileId, path);
    }
  }

  modelFor(fileId: string): monaco.editor.ITextModel | null {
    return this.files.get(fileId)?.model ?? null;
  }

  handleFor(fileId: string): DocHandle | null {
    return this.files.get(fileId)?.handle ?? null;
  }

  undoFor(fileId: string): FileUndo | null {
    return this.files.get(fileId)?.undo ?? null;
  }

  fileIdOf(model: monaco.editor.ITextModel): string | null {
    for (const [fileId, file] of this.files) if (file.model === model) return fileId;
    return null;
  }

  /** Redraws remote cursors of a file; y-monaco only does it when awareness or text changes. */
  redrawCursors(fileId: string): void {
    this.files.get(fileId)?.binding._rerenderDecorations();
  }

  /** Takes this tab's cursor out of a file it no longer shows. */
  clearSelection(fileId: string): void {
    this.files.get(fileId)?.handle.awareness.setLocalStateField('selection', null);
  }

  handles(): DocHandle[] {
    return [...this.files.values()].map((file) => file.handle);
  }

  setUser(user: PresenceUser): void {
    this.user = user;
    for (const file of this.files.values()) file.handle.awareness.setLocalStateField('user', user);
  }

  private open(fileId: string, path: string): void {
    const handle = this.client.openDoc(fileId);
    handle.awareness.setLocalStateField('user', this.user);
    const undo = new FileUndo(handle.doc, handle.doc.getText(FILE_TEXT_KEY));
    this.files.set(fileId, this.bind(handle, path, undo));
    this.hooks.onOpen(handle);
  }

  private bind(handle: DocHandle, path: string, undo: FileUndo): BoundFile {
    const ytext = handle.doc.getText(FILE_TEXT_KEY);
    const uri = uriOf(path);
    // A model left at this uri by a file deleted in the same change would make createModel throw.
    monaco.editor.getModel(uri)?.dispose();
    const model = monaco.editor.createModel(ytext.toString(), undefined, uri);
    // The person's tab size (Settings); indentation with spaces, as the workspace's files are.
    const { tabSize } = useSettings.getState();
    model.updateOptions({ tabSize, indentSize: tabSize, insertSpaces: true });
    const binding = new MonacoBinding(ytext, model, this.editors, handle.awareness);
    undo.track(binding);
    return { path, handle, model, binding, undo };
  }

  private close(fileId: string): void {
    const file = this.files.get(fileId);
    if (!file) return;
    this.files.delete(fileId);
    this.hooks.onClose(file.handle);
    file.undo.destroy();
    file.model.dispose();
    this.client.closeDoc(fileId);
  }

  dispose(): void {
    for (const fileId of [...this.files.keys()]) this.close(fileId);
  }
}
