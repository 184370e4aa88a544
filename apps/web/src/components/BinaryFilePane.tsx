import { parentPath } from '@flint/protocol';
import { entryBytes, formatBytes } from '../project/binaryFiles';
import { downloadZip } from '../stores/projectTransfers';
import { selectActivePath, useWorkspace } from '../stores/workspaceStore';
import { Icon } from './Icon';

/**
 * What shows in place of the editor for a binary file: it has no document to edit. Its bytes
 * come with a zip of its folder (the gateway zips folders, not single files).
 */
export function BinaryFilePane() {
  const path = useWorkspace(selectActivePath);
  const bytes = useWorkspace((s) => (path === null ? null : entryBytes(s.entries.get(path))));
  if (path === null) return null;
  const folder = parentPath(path);
  const size = bytes === null ? '' : `, ${formatBytes(bytes)}`;
  return (
    <div className="editor-empty binary-pane" data-testid="binary-placeholder">
      <Icon name="binary" className="binary-pane-icon" />
      <p>
        Binary file{size} — not opened as text
      </p>
      <p className="muted binary-pane-path">{path}</p>
      <p>
        <button type="button" className="button" data-testid="binary-download-button" onClick={() => void downloadZip(folder)}>
          <Icon name="download" /> {folder === '' ? 'Download the workspace as zip' : `Download ${folder} as zip`}
        </button>
      </p>
    </div>
  );
}
