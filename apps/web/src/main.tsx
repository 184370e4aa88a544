import { createRoot } from 'react-dom/client';
import { App } from './components/App';
import { storedToken } from './memory/recentWorkspaces';
import { readRoute } from './route';
import { startWorkspace } from './startWorkspace';
import { installTheme } from './stores/settingsStore';
import './styles.css';

// The person's theme (or the system's), on the page before anything is drawn.
installTheme();

let route = readRoute(window.location);
// `/w/<id>` without its token, in a browser that opened it before: open it with the token kept then.
const kept = route.kind === 'missing-token' ? storedToken(route.workspaceId) : null;
if (route.kind === 'missing-token' && kept !== null) route = { kind: 'workspace', workspaceId: route.workspaceId, token: kept };
if (route.kind === 'workspace') startWorkspace(route.workspaceId, route.token);

// A pasted link for another workspace (or token) in this tab: start clean rather than mix two.
window.addEventListener('hashchange', () => window.location.reload());

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(<App route={route} />);
