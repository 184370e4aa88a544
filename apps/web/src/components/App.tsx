import { CloseCode } from '@flint/protocol';
import { lazy, Suspense } from 'react';
import type { Route } from '../route';
import { useConnection } from '../stores/connectionStore';
import { Landing, LinkProblem } from './Landing';

// Monaco is most of the bundle; the landing page does not wait for it.
const Workspace = lazy(() => import('./Workspace'));

export function App({ route }: { route: Route }) {
  switch (route.kind) {
    case 'landing':
      return <Landing />;
    case 'workspace':
      return <WorkspaceRoute />;
    case 'missing-token':
      return (
        <LinkProblem
          title="This link is incomplete"
          detail="A workspace link ends with #token=… and that part is missing. Copy the whole link again, or ask for a new one."
        />
      );
    case 'not-found':
      return <LinkProblem title="Nothing here" detail="This address is not a Flint workspace link." />;
  }
}

const refusedTitles: Partial<Record<number, string>> = {
  [CloseCode.LinkRevoked]: 'This link was revoked',
  [CloseCode.LinkExpired]: 'This link has expired',
  [CloseCode.Unauthorized]: 'This link does not open this workspace',
  [CloseCode.WorkspaceNotFound]: 'No such workspace',
  [CloseCode.ProtocolVersion]: 'This page is out of date',
};

/**
 * The IDE, unless the gateway refused the link before it ever opened (revoked, expired, wrong,
 * gone): then a plain page that says so, without an empty IDE around it. A link revoked while
 * the IDE is open keeps the IDE, with its banner (ClosedBanner).
 */
function WorkspaceRoute() {
  const refused = useConnection((s) => (s.status.kind === 'closed' && s.role === null ? s.status : null));
  if (refused) {
    return (
      <LinkProblem
        title={refusedTitles[refused.code] ?? 'This workspace could not be opened'}
        detail={refused.message}
        reload={refused.code === CloseCode.ProtocolVersion}
      />
    );
  }
  return (
    <Suspense fallback={<div className="boot">Loading editor…</div>}>
      <Workspace />
    </Suspense>
  );
}
