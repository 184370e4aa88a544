import { describeUnsynced, unsyncedReason } from '../project/unsyncedFile';
import { useWorkspace } from '../stores/workspaceStore';

/**
 * Over the editor of a folder project's file that stopped reaching the disk (it is no longer
 * UTF-8 text there, or too large): says so, and that what is typed is kept.
 */
export function UnsyncedBanner() {
  const reason = useWorkspace((s) => {
    const path = s.activeFileId === null ? undefined : s.pathById.get(s.activeFileId);
    return path === undefined ? null : unsyncedReason(s.entries.get(path));
  });
  if (reason === null) return null;
  return (
    <div className="unsynced-banner" role="status" data-testid="unsynced-banner" data-reason={reason}>
      {describeUnsynced(reason)}
    </div>
  );
}
