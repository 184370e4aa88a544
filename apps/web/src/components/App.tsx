import { lazy, Suspense } from 'react';
import type { Route } from '../route';
import { Landing, LinkProblem } from './Landing';

// Monaco is most of the bundle; the landing page does not wait for it.
const Workspace = lazy(() => import('./Workspace'));

export function App({ route }: { route: Route }) {
  switch (route.kind) {
    case 'landing':
      return <Landing />;
    case 'workspace':
      return (
        <Suspense fallback={<div className="boot">Loading editor…</div>}>
          <Workspace />
        </Suspense>
      );
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
