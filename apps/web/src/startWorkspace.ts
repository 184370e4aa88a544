import { bindAgent } from './stores/agentStore';
import { connect } from './stores/connectionStore';
import { bindWorkspaceModel } from './stores/modelConnectionStore';
import { bindPresence } from './stores/presenceStore';
import { bindProject } from './stores/projectStore';
import { bindTerminals } from './stores/terminalStore';
import { bindThread } from './stores/threadStore';
import { bindWorkspace } from './stores/workspaceStore';

let started: string | null = null;

/**
 * Opens the tab's connection and wires the stores to it, before any component renders, so
 * the socket opens while Monaco (a large chunk) is still loading.
 */
export function startWorkspace(workspaceId: string, token: string): void {
  const key = `${workspaceId}#${token}`;
  if (started === key) return;
  started = key;
  const client = connect(workspaceId, token);
  bindWorkspace(client);
  bindPresence(client);
  bindAgent(client);
  bindThread(client);
  bindWorkspaceModel(client);
  bindProject(client);
  bindTerminals(client);
}
