import { createRoot } from 'react-dom/client';
import { App } from './components/App';
import { readRoute } from './route';
import { startWorkspace } from './startWorkspace';
import './styles.css';

const route = readRoute(window.location);
if (route.kind === 'workspace') startWorkspace(route.workspaceId, route.token);

// A pasted link for another workspace (or token) in this tab: start clean rather than mix two.
window.addEventListener('hashchange', () => window.location.reload());

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(<App route={route} />);
