import type { FlintClient } from '@flint/client';
import { create } from 'zustand';
import { connectModel, disconnectModel, fetchWorkspaceModel, playDemoReplay, type ConnectionKind, type ModelConnection } from '../api/modelConnectApi';
import { fetchRouteModels } from '../api/workspaceApi';
import { linkCredentials } from './connectionStore';
import { usePresence } from './presenceStore';
import { DEMO_MODEL, useThread } from './threadStore';

/**
 * Which model the workspace's agent uses (issue 37): one its owner connected, else the
 * gateway's. While that is only the bundled demo model, the agent panel offers connecting one
 * and a replay instead of free-running it, unless this browser chose it for the workspace.
 */
interface ModelConnectionState {
  loaded: boolean;
  connection: ModelConnection | null;
  gatewayModel: string | null;
  canConnect: boolean;
  /** This browser picked the bundled model for this workspace anyway. */
  bundledChosen: boolean;
}

export const useModelConnection = create<ModelConnectionState>(() => ({ loaded: false, connection: null, gatewayModel: null, canConnect: false, bundledChosen: false }));

const bundledKey = (workspaceId: string) => `flint.bundledModel.${workspaceId}`;

/** The first minute: no real model to prompt, and the bundled one not picked on purpose. */
export function selectNeedsModel(state: ModelConnectionState): boolean {
  return state.loaded && state.connection === null && state.gatewayModel === DEMO_MODEL && !state.bundledChosen;
}

/** Asks the gateway again; the thread's route models follow (a connected model serves both agent routes). */
export async function refreshWorkspaceModel(): Promise<void> {
  const credentials = linkCredentials();
  if (!credentials) return;
  const [info, routes] = await Promise.all([fetchWorkspaceModel(credentials.workspaceId, credentials.token), fetchRouteModels()]);
  let bundledChosen = false;
  try {
    bundledChosen = localStorage.getItem(bundledKey(credentials.workspaceId)) === '1';
  } catch {
    // Storage disabled: the choice lasts as long as the tab.
    bundledChosen = useModelConnection.getState().bundledChosen;
  }
  if (!info.ok) {
    // An older gateway without the route, or a dead link: the panel behaves as before.
    console.warn('Flint: could not read the workspace model:', info.message);
    if (routes) useThread.setState({ models: routes });
    return;
  }
  const { connection, gateway, canConnect } = info.value;
  useModelConnection.setState({ loaded: true, connection, gatewayModel: gateway.model, canConnect, bundledChosen });
  useThread.setState({ models: connection ? { fast: connection.model, deep: connection.model } : routes });
}

export async function connectWorkspaceModel(request: { kind: ConnectionKind; baseUrl?: string; apiKey?: string; model: string }): Promise<string | null> {
  const credentials = linkCredentials();
  if (!credentials) return 'This tab is not connected to a workspace.';
  const result = await connectModel(credentials.workspaceId, credentials.token, request);
  if (!result.ok) return result.message;
  await refreshWorkspaceModel();
  return null;
}

export async function disconnectWorkspaceModel(): Promise<string | null> {
  const credentials = linkCredentials();
  if (!credentials) return 'This tab is not connected to a workspace.';
  const result = await disconnectModel(credentials.workspaceId, credentials.token);
  if (!result.ok) return result.message;
  await refreshWorkspaceModel();
  return null;
}

export async function playDemoTurn(speed = 1): Promise<string | null> {
  const credentials = linkCredentials();
  if (!credentials) return 'This tab is not connected to a workspace.';
  const result = await playDemoReplay(credentials.workspaceId, credentials.token, usePresence.getState().self.name, speed);
  return result.ok ? null : result.message;
}

export function chooseBundledModel(chosen: boolean): void {
  const credentials = linkCredentials();
  try {
    if (credentials) localStorage.setItem(bundledKey(credentials.workspaceId), chosen ? '1' : '0');
  } catch {
    // Storage disabled: kept for this tab only.
  }
  useModelConnection.setState({ bundledChosen: chosen });
}

/**
 * Asks once the tab is open, and again when it may have changed for someone else: the owner
 * connected a model (a new turn names its model), or the tab comes back into view.
 */
export function bindWorkspaceModel(client: FlintClient): void {
  let asked = false;
  const ask = () => {
    if (asked) return;
    asked = true;
    void refreshWorkspaceModel();
  };
  if (client.status.kind === 'open') ask();
  client.onStatus((status) => status.kind === 'open' && ask());
  window.addEventListener('focus', () => void refreshWorkspaceModel());
  useThread.subscribe((state, previous) => {
    if (state.turns.size !== previous.turns.size) void refreshWorkspaceModel();
  });
}
