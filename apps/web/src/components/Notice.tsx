import { useEffect } from 'react';
import { dismissNotice, useWorkspace } from '../stores/workspaceStore';

/** A file operation the gateway refused, said in a sentence; fades after a few seconds. */
export function Notice() {
  const notice = useWorkspace((s) => s.notice);
  useEffect(() => {
    if (notice === null) return;
    const timer = setTimeout(dismissNotice, 6_000);
    return () => clearTimeout(timer);
  }, [notice]);
  if (notice === null) return null;
  return (
    <div className="notice" role="status" data-testid="notice" onClick={dismissNotice}>
      {notice}
    </div>
  );
}
