import { useEffect } from 'react';
import { dismissNotice, useWorkspace } from '../stores/workspaceStore';

/**
 * A sentence in the corner: a file operation the gateway refused, or an upload's progress and
 * result. Fades after a few seconds (longer for a report of several lines), except while the
 * work it describes is under way.
 */
export function Notice() {
  const notice = useWorkspace((s) => s.notice);
  useEffect(() => {
    if (notice === null || notice.busy) return;
    const timer = setTimeout(dismissNotice, notice.text.includes('\n') ? 12_000 : 6_000);
    return () => clearTimeout(timer);
  }, [notice]);
  if (notice === null) return null;
  return (
    <div className={`notice notice--${notice.tone}`} role={notice.tone === 'error' ? 'alert' : 'status'} data-testid="notice" data-tone={notice.tone} onClick={dismissNotice}>
      {notice.text}
    </div>
  );
}
